"""mtptui: a terminal console for speculative decoding on SGLang and vLLM servers."""

__version__ = "0.1.0"
