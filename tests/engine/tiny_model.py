"""A tiny Llama for the real vLLM, made without a download: its config and a byte-level BPE
tokenizer trained in about a second over the GPL's text (every Debian machine has it). Served with
`--load-format dummy`, so there are no weights. Run by the engine venv's python:

    VENV/bin/python tiny_model.py DIR
"""

import sys
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, PreTrainedTokenizerFast

CORPUS = "/usr/share/common-licenses/GPL-3"
# A plain chat template: the dashboard's smoke and bench send chat requests too.
CHAT = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}assistant:"


def make(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    LlamaConfig(vocab_size=2048, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                torch_dtype="bfloat16").save_pretrained(out)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2048, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train([CORPUS], trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    fast.chat_template = CHAT
    fast.save_pretrained(out)


if __name__ == "__main__":
    make(Path(sys.argv[1]))
