"""Batching rule of `fft` (jax/_src/lax/fft.py `_fft_batching_rule`): the transform acts on the trailing
len(fft_lengths) axes, so a leading batch axis is one more untouched leading dimension."""

from __future__ import annotations

from transforms.batching.rule import Values, VmapBook, node

V = VmapBook("fft")

V.batch("fft", "b", lambda x, *, op: op(x), values=Values(lambda e: {"op": e.params}, op=node("fft")),
        math="fft(x)[b] = fft(x[b]): the same params, the batch axis first is a leading axis fft leaves alone")
