"""Container hosts: the config's and the command line's targets, the runtime's answers read, and
a container log's resume by stamp and text (the live tier proves them on a real dockerd)."""

from __future__ import annotations

import json

import pytest

from mtptui.config import ConfigError, parse_config, resolve_hosts
from mtptui.control.compose import ComposeTarget
from mtptui.control.container import create_argv
from mtptui.sources.container import Resume
from mtptui.sources.runtime import Selector, parse_inspect, selector_of, stamp_key


def test_a_host_is_a_unit_a_container_or_a_compose_service():
    c = parse_config('[defaults]\nunit = "sglang"\n[[hosts]]\nname = "a"\n'
                     '[[hosts]]\nname = "b"\ncontainer = "sim"\nlocal = true\n'
                     '[[hosts]]\nname = "c"\ncompose = "/srv/llm/compose.yaml"\nservice = "sglang"\n')
    assert [(h.name, h.kind, h.unit) for h in c.hosts] == [("a", "systemd", "sglang"), ("b", "container", ""),
                                                           ("c", "compose", "")]
    sel = selector_of(c.hosts[2])
    assert (sel.project_dir, sel.files, sel.service, sel.runtime) == ("/srv/llm", ("/srv/llm/compose.yaml",),
                                                                     "sglang", "docker")


@pytest.mark.parametrize("host, said", [
    ('container = "x"\nunit = "u"', "names both a unit and a container"),
    ('container = "x"\ncompose = "/p"\nservice = "s"', "names both a container and a compose service"),
    ('service = "s"', "needs both compose"),
    ('unit = "u"\nlocal = true', "local = true is for a container host"),
    ('container = "a b"', "must be a name like"),
    ('container = "x"\nruntime = "lxc"', "must be one of docker, podman"),
])
def test_a_host_with_two_targets_or_half_of_one_is_refused(host, said):
    with pytest.raises(ConfigError, match=said):
        parse_config(f'[[hosts]]\nname = "h"\n{host}\n')


def test_the_command_line_target_replaces_the_configs_unit():
    c = parse_config('[[hosts]]\nname = "gpu1"\nunit = "sglang"\n')
    h = resolve_hosts(["gpu1"], c, target={"container": "sim", "compose": None, "service": None, "runtime": None})[0]
    assert (h.kind, h.unit, h.container) == ("container", "", "sim")
    with pytest.raises(ConfigError, match="which unit"):
        resolve_hosts(["ops@10.0.0.7"], c)


def _line(stamp: str, text: str) -> str:
    return f"{stamp} {text}"


def test_resume_skips_what_was_pushed_at_the_last_stamp_and_nothing_else():
    r = Resume()
    first = [_line("2026-12-06T18:32:39.5Z", "a"), _line("2026-12-06T18:32:39.722635726Z", "b"),
             _line("2026-12-06T18:32:39.722635726Z", "c")]
    assert r.new(first) == first
    # after a cut, --since the last stamp: the runtime sends that stamp's lines again, and a new one at it
    again = [first[1], first[2], _line("2026-12-06T18:32:39.722635726Z", "d"), _line("2026-12-06T18:32:40Z", "e"),
             "Error response from daemon: not stamped"]
    assert r.new(again) == [again[2], again[3]]
    assert r.said == "Error response from daemon: not stamped"
    assert stamp_key("2026-12-06T18:32:39.5Z") == stamp_key("2026-12-06T18:32:39.500000000Z")


INSPECT = [{"Id": "9c61a32097cdacaa", "Name": "/sim-1", "Created": "2026-12-06T23:16:28Z",
            "State": {"Status": "running", "Running": True, "ExitCode": 0, "StartedAt": "2026-12-06T23:16:28.871Z"},
            "RestartCount": 0,
            "Config": {"Image": "img:1", "Entrypoint": None, "Cmd": ["python3", "-m", "sglang.launch_server"],
                       "Env": ["PATH=/usr/bin", "HF_HOME=/data"], "Labels": {"com.docker.compose.container-number": "1"},
                       "User": "", "WorkingDir": ""},
            "HostConfig": {"NetworkMode": "host", "Binds": ["/data:/data:ro"], "RestartPolicy": {"Name": "unless-stopped"},
                           "DeviceRequests": [{"Count": -1, "Capabilities": [["gpu"]]}], "ShmSize": 32 << 30,
                           "IpcMode": "host", "PortBindings": {"30000/tcp": [{"HostIp": "", "HostPort": "30000"}]}}}]


def test_a_container_is_recreated_with_its_options_and_the_new_command():
    c = parse_inspect(json.dumps(INSPECT))[0]
    assert (c.name, c.number, c.argv, c.replica("gpu1")) == ("sim-1", 1, ["python3", "-m", "sglang.launch_server"],
                                                             "gpu1-1")
    argv = create_argv("docker", c, "sim-1-mtptui-new", ["python3", "-m", "sglang.launch_server", "--tp", "2"],
                       {"X": "1"}, '{"argv": []}')
    text = " ".join(argv)
    for part in ("--network host", "--volume /data:/data:ro", "--restart unless-stopped", "--gpus all",
                 "--ipc host", f"--shm-size {32 << 30}", "--publish 30000:30000/tcp", "--env HF_HOME=/data",
                 "--env X=1", "--label io.mtptui.spec={\"argv\": []}"):
        assert part in text, part
    assert argv[-6:] == ["img:1", "python3", "-m", "sglang.launch_server", "--tp", "2"]


def test_the_compose_override_names_the_whole_argv_and_the_base():
    t = ComposeTarget(None, Selector("docker", project_dir="/p", files=("/p/docker-compose.yml",), service="sim"),
                      host="h")
    t._last = parse_inspect(json.dumps(INSPECT))
    t._version = "2.4"
    text = t.render(["python3", "-m", "x", "--a"], {"E": "1"}, profile="mtp1", written_by="me")
    body = json.loads("\n".join(x for x in text.splitlines() if not x.startswith("#")))
    assert body == {"version": "2.4", "services": {"sim": {"entrypoint": ["python3"], "command": ["-m", "x", "--a"],
                                                           "environment": {"E": "1"}}}}
    assert '# base: ["python3", "-m", "sglang.launch_server"]' in text


def test_a_replica_finds_its_compose_services_control_and_nothing_else_does():
    from mtptui.control.session import Controls, HostControl
    from mtptui.control.target import SystemdTarget

    sel = Selector("docker", project_dir="/p", files=("/p/docker-compose.yml",), service="sim")
    controls = Controls()
    controls["sim"] = compose = HostControl(ComposeTarget(None, sel, host="sim"), host="sim")
    controls["gpu"] = HostControl(SystemdTarget(None, "sglang"), host="gpu")
    assert controls.get("sim-2") is compose and controls.get("sim") is compose
    assert controls.get("gpu-1") is None and controls.get(None) is None  # a unit's host has no replicas


def test_the_servers_port_is_probed_only_where_the_host_reaches_it():
    from mtptui.control.container import ContainerTarget

    t = ContainerTarget(None, Selector("docker", container="sim-1"), host="h")
    raw = json.loads(json.dumps(INSPECT))
    t._last = parse_inspect(json.dumps(raw))
    assert t.published(30000) == ("127.0.0.1", 30000)  # the host's network
    raw[0]["HostConfig"].update(NetworkMode="bridge", PortBindings={"30000/tcp": [{"HostIp": "", "HostPort": "8080"}]})
    t._last = parse_inspect(json.dumps(raw))
    assert t.published(30000) == ("127.0.0.1", 8080) and t.published(31000) is None
    raw[0]["HostConfig"].update(NetworkMode="none", PortBindings={})
    t._last = parse_inspect(json.dumps(raw))
    assert t.published(30000) is None  # never the host's own port 30000: another server may hold it
