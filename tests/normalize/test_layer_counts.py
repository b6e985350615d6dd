"""ModelSpec.layer_counts: always the counts of the spec asked, in a list of the caller's own."""

from __future__ import annotations

from dataclasses import replace

from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec


def _spec(pattern: list[int], kinds: int = 2) -> ModelSpec:
    mixer = Mixer(kind="attention", num_heads=8, num_kv_heads=8, head_dim=64)
    layer_kinds = [
        LayerKind(name=f"k{i}", mixer=mixer, ffn=FFN(kind="dense", intermediate_size=1024 * (i + 1)))
        for i in range(kinds)
    ]
    return ModelSpec(
        format="hf", hidden_size=512, num_layers=len(pattern), layer_kinds=layer_kinds, layer_pattern=pattern
    )


def test_counts_follow_the_pattern_of_each_spec():
    spec = _spec([0, 0, 0, 1, 1])
    assert spec.layer_counts() == [3, 2]
    counts = spec.layer_counts()
    counts[0] = 99  # a caller's copy: the next answer is unchanged
    assert spec.layer_counts() == [3, 2]
    wider = replace(spec, hidden_size=1024)  # shares the pattern list
    assert wider.layer_counts() == [3, 2]
    deeper = replace(spec, num_layers=7, layer_pattern=[0, 1, 1, 1, 1, 1, 1])
    assert deeper.layer_counts() == [1, 6] and spec.layer_counts() == [3, 2]
    assert _spec([0, 0, 0, 1, 1], kinds=3).layer_counts() == [3, 2, 0]
