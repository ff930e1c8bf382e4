"""AMD's tools read into GpuSamples (core/gpus.AmdStream), on their output as the tools write it.

Where the formats come from:
- amd-smi: ROCm/amdsmi at 0ceca28 (ROCm 6.3), amdsmi_cli/amdsmi_commands.py `monitor` (the keys
  gpu, power_usage, hotspot_temperature, memory_temperature, gfx, gfx_clock, vram_used, vram_total,
  the same since the command came in ROCm 6.1; `timestamp` first under `-w`) and
  amdsmi_logger.py `_print_csv_output` (csv.DictWriter: a header each print, `\\r\\n` line ends,
  then print's `\\n`; "N/A" for a figure it cannot read); handle_watch's first line. The figures
  are CHANGELOG.md's `amd-smi monitor -p -t -v` example for an MI300X (248 W, 55/48 °C,
  283/196300 MB).
- rocm-smi: ROCm/rocm_smi_lib at a129571, python_smi_tools/rocm_smi.py `formatCsv` (a `device`
  column of `cardN`, then each key in the order the show* functions ran: temperatures, max power,
  power, use, memory, product; commas dropped from values; a sensor that reads N/A is left out) and
  the key names of showCurrentTemps, showMaxPower, showPower ("Current Socket" or "Average"),
  showGpuUse, showMemInfo (bytes) and showProductName.
"""

from __future__ import annotations

from mtptui.core.gpus import AMD_NAME, AMD_SMI_ARGV, ROCM_SMI_ARGV, AmdStream, parse_amd_text

AMD_SMI_WATCH = (
    "'CTRL' + 'C' to stop watching output:\n"
    "timestamp,gpu,power_usage,hotspot_temperature,memory_temperature,gfx,gfx_clock,vram_used,vram_total\r\n"
    "1730000000,0,248,55,48,97,2100,283,196300\r\n"
    "1730000000,1,247,55,48,N/A,2100,283,196300\r\n"
    "\n"
    "timestamp,gpu,power_usage,hotspot_temperature,memory_temperature,gfx,gfx_clock,vram_used,vram_total\r\n"
    "1730000001,0,221,50,42,95,2100,283,196300\r\n"
    "1730000001,1,222,50,42,94,2100,283,196300\r\n"
    "\n"
)

ROCM_SMI_MI300X = (
    "device,Temperature (Sensor junction) (C),Temperature (Sensor memory) (C),Max Graphics Package Power (W),"
    "Current Socket Graphics Package Power (W),GPU use (%),VRAM Total Memory (B),VRAM Total Used Memory (B),"
    "Card Series,Card Model,Card Vendor,Card SKU,Subsystem ID,Device Rev,Node ID,GUID,GFX Version\n"
    "card0,40.0,33.0,750.0,133.0,12,205822885888,296910848,AMD Instinct MI300X,0x74a1,"
    "Advanced Micro Devices Inc. [AMD/ATI],M3000100,0x74a1,0x00,2,28851,gfx942\n"
    "card1,41.0,34.0,750.0,N/A (Secondary die),0,205822885888,296910848,AMD Instinct MI300X,0x74a1,"
    "Advanced Micro Devices Inc. [AMD/ATI],M3000100,0x74a1,0x00,3,45678,gfx942\n"
)

ROCM_SMI_RADEON = (
    "device,Temperature (Sensor edge) (C),Temperature (Sensor junction) (C),Temperature (Sensor memory) (C),"
    "Max Graphics Package Power (W),Average Graphics Package Power (W),GPU use (%),VRAM Total Memory (B),"
    "VRAM Total Used Memory (B),Card Series\n"
    "card0,45.0,52.0,60.0,303.0,28.0,3,25753026560,1073741824,Radeon RX 7900 XTX\n"
)


def test_amd_smi_monitor_watch():
    got = AmdStream()
    samples = got.feed(AMD_SMI_WATCH.encode(), 5.0)
    assert [(s.index, s.util) for s in samples] == [(0, 97.0), (1, None), (0, 95.0), (1, 94.0)]
    s = samples[0]
    assert (s.t, s.name, s.power, s.temp, s.sm_clock, s.mem_used, s.mem_total, s.power_limit) == \
        (5.0, AMD_NAME, 248.0, 55.0, 2100.0, 283.0, 196300.0, None)
    assert got.bad == 1  # the watch's "'CTRL' + 'C'" line, not a sample


def test_a_row_cut_between_chunks_is_joined():
    data = AMD_SMI_WATCH.encode()
    got = AmdStream()
    cut = data.index(b"1730000000,1") + 5
    assert len(got.feed(data[:cut], 1.0)) == 1
    assert [s.index for s in got.feed(data[cut:], 2.0)] == [1, 0, 1]


def test_rows_before_any_header_are_not_read():
    got = AmdStream()
    assert got.feed(b"1730000000,0,248,55,48,97,2100,283,196300\r\n", 0.0) == [] and got.bad == 1


def test_rocm_smi_mi300x():
    a, b = parse_amd_text(ROCM_SMI_MI300X, 3.0)
    assert (a.index, a.name, a.util, a.power, a.power_limit, a.temp) == (0, "AMD Instinct MI300X", 12.0, 133.0,
                                                                          750.0, 40.0)
    assert round(a.mem_total or 0) == 196288 and round(a.mem_used or 0) == 283  # bytes -> MiB
    assert b.index == 1 and b.power is None  # the secondary die's "N/A (Secondary die)"


def test_rocm_smi_radeon_reads_the_junction_over_the_edge():
    (s,) = parse_amd_text(ROCM_SMI_RADEON)
    assert (s.name, s.temp, s.power, s.util, s.mem_used) == ("Radeon RX 7900 XTX", 52.0, 28.0, 3.0, 1024.0)


def test_the_commands_are_argvs():
    # lists of words, never a shell string: the transport hands them on as they are
    assert all(" " not in a for a in AMD_SMI_ARGV + ROCM_SMI_ARGV)
    assert AMD_SMI_ARGV[:3] == ("env", "PYTHONUNBUFFERED=1", "amd-smi") and AMD_SMI_ARGV[-2:] == ("-w", "1")
