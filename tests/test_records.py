"""colint.records, kept for settings.FileSettings only (colint/records.py says why): its validation without
pydantic must return what pydantic returns. Delete this file with colint/records.py."""

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from colint import records
from colint.settings import FileSettings

VALID = {
    "gpus": ["b200"],
    "tp": "auto",
    "extend-select": ["CL2"],
    "fail_on": "info",
    "per-file-ignores": {"a/**": ["CL201"]},
    "severity": {"CL009": "warning"},
    "rules": {"CL201": {"x": 1.5}},
    "vocab-size": 32000,
}
_ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([10**100, 2**63, 128, 1e-9, 0.5, 7.0]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.sampled_from(["auto", "bf16", "b200"]),
    st.lists(st.one_of(st.integers(-1, 3), st.text(max_size=3), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=3), st.one_of(st.integers(-1, 3), st.floats(), st.text(max_size=3)), max_size=3),
    st.tuples(st.integers(), st.integers()),
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _mutated(data, path, new, drop):
    out = copy.deepcopy(data)
    if not path:
        return new
    holder = out
    for p in path[:-1]:
        holder = holder[p]
    if drop and isinstance(holder, dict):
        del holder[path[-1]]
    else:
        holder[path[-1]] = new
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_exact_data_path_agrees_with_pydantic(data):
    """Mutate one value anywhere in a valid [tool.colint] table: whenever the exact-data path builds a
    value, pydantic accepts the same input and builds an equal value."""
    path = data.draw(st.sampled_from(list(_paths(VALID))))
    value = _mutated(VALID, path, data.draw(_ODD_VALUES), data.draw(st.booleans()))
    fast = records._exact(FileSettings, value)
    try:
        mirror = records.schema_model(FileSettings).model_validate(value)
    except ValidationError:
        assert fast is records._NO, (path, value)
        return
    if fast is not records._NO:  # equal, types included (1 vs 1.0)
        assert repr(fast.__dict__) == repr({k: getattr(mirror, k) for k in FileSettings.__record_fields__}), value


def test_exact_data_path_takes_a_real_table_and_declines_what_needs_coercion():
    fast = records._exact(FileSettings, VALID)
    assert fast is not records._NO and fast.tp == "auto" and fast.extend_select == ["CL2"]
    assert records._exact(FileSettings, {"ep": "8"}) is records._NO  # "8" -> 8 is pydantic's coercion
    assert records._exact(FileSettings, {"ep": True}) is records._NO  # a bool is not an int here
    assert FileSettings.model_validate({"ep": "8"}).ep == 8
    with pytest.raises(ValidationError) as exc:
        FileSettings.model_validate({"ep": 0})
    assert exc.value.errors()[0]["loc"] == ("ep",)
