"""The benchmark's prompts: short, varied chat requests of the kind a served model gets (no
arithmetic: the simulator answers that in a word, and a benchmark wants long answers), drawn by
seed so that two runs send the same requests in the same order."""

from __future__ import annotations

import random

PROMPTS = (
    "Explain how speculative decoding speeds up text generation, in plain words.",
    "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "Summarise the causes of the French Revolution for a high-school student.",
    "Describe the water cycle and why it matters for agriculture.",
    "What are the trade-offs between tensor parallelism and pipeline parallelism?",
    "Write a polite email asking a colleague to review a pull request before Friday.",
    "Compare Python lists and tuples, with an example of when to use each.",
    "Give advice to someone preparing for their first marathon.",
    "Explain what a hash table is and how collisions are handled.",
    "Describe a walk through an autumn forest, as vividly as you can.",
    "What should a team check before deploying a database migration to production?",
    "Explain the difference between latency and throughput with an everyday analogy.",
    "Write a product description for a reusable water bottle.",
    "How does a transformer attend to earlier tokens? Keep it intuitive.",
    "List the steps to bake a loaf of sourdough bread and explain each one.",
    "Why do some bridges sway in the wind, and how do engineers prevent it?",
    "Write a dialogue between a customer and a barista about a new seasonal drink.",
    "Explain the idea of a key-value cache in language model inference.",
    "What makes a good code review comment? Give examples of good and bad ones.",
    "Describe the life cycle of a star like the Sun.",
    "Translate the spirit of a rainy Monday morning into a short poem.",
    "Explain how public-key cryptography lets two strangers share a secret.",
    "What are the benefits and risks of working from home for a small company?",
    "Describe how a bill becomes a law in a parliamentary democracy.",
)


def draw(n: int, seed: int = 0) -> list[str]:
    """n prompts, the same ones for the same seed."""
    rng = random.Random(seed)
    return [rng.choice(PROMPTS) for _ in range(n)]
