"""Falcon-H1 (``falcon_h1``): attention and a Mamba-2 mixer side by side in every layer, then an MLP.

transformers 5.24 (``configuration_falcon_h1.py``, ``modeling_falcon_h1.py``), per layer
(``FalconH1DecoderLayer``): ``input_layernorm`` (H) feeds both ``self_attn`` and ``mamba``; their
outputs (times the µP multipliers) are summed into the residual; ``pre_ff_layernorm`` (H) and a
gated MLP (``gate_proj``/``up_proj``/``down_proj`` of ``intermediate_size``, bias ``mlp_bias``).

- attention: q/k/v/o with ``attention_bias``; head_dim = ``head_dim`` when given, else H / heads.
- Mamba-2 (``FalconH1Mixer``): d_ssm = ``mamba_d_ssm`` (default 1024; null = ``mamba_expand`` x H),
  ``in_proj`` H -> 2 d_ssm + 2 ``mamba_n_groups`` ``mamba_d_state`` + ``mamba_n_heads`` (bias
  ``mamba_proj_bias``), depthwise ``conv1d`` over d_ssm + 2 groups d_state channels
  (``mamba_d_conv`` taps, bias ``mamba_conv_bias``), ``dt_bias``/``A_log``/``D`` (one per head), a
  gated RMSNorm (d_ssm) only with ``mamba_rms_norm``, ``out_proj`` d_ssm -> H (bias
  ``projectors_bias``). ``mamba_d_head`` ("auto" = d_ssm / heads) must satisfy heads x d_head = d_ssm.
  ``mup_vector`` is a buffer, not a parameter.
Final ``final_layernorm`` (H); LM head untied by default. The µP multipliers shape nothing.

In the ModelSpec a layer's ``mixer`` is the attention (what the head/KV rules edit) and its
``parallel_mixer`` the Mamba-2 block; the analysis costs both.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention, mamba2_mixer
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.moe_common import KindTable
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec

# FalconH1Config class defaults (transformers 5.24)
_D = dict(
    hidden=4096,
    layers=32,
    heads=32,
    kv=8,
    inter=14336,
    vocab=128000,
    d_ssm=1024,
    m_heads=128,
    groups=1,
    d_state=256,
    taps=4,
    expand=2,
)


def _mamba(r: HFReader, h: int, rejects: list[str]) -> tuple[Mixer, int]:
    """(the Mamba-2 mixer, its parameters outside the GEMMs)."""
    expand = r.int(None, "mamba_expand", default=_D["expand"])
    d_ssm = r.opt_int(None, "mamba_d_ssm") if r.doc.has(r.path("mamba_d_ssm")) else _D["d_ssm"]
    if d_ssm is None:  # explicit null: expand x hidden
        d_ssm = expand * h
    heads = r.int(None, "mamba_n_heads", default=_D["m_heads"])
    groups = r.int(None, "mamba_n_groups", default=_D["groups"])
    d_state = r.int(None, "mamba_d_state", default=_D["d_state"])
    taps = r.int(None, "mamba_d_conv", default=_D["taps"])
    proj_bias = r.bool(None, "mamba_proj_bias", default=False)
    out_bias = r.bool(None, "projectors_bias", default=False)
    conv_bias = r.bool(None, "mamba_conv_bias", default=True)
    rms_norm = r.bool(None, "mamba_rms_norm", default=False)
    d_head = r.raw("mamba_d_head", default="auto")
    if d_ssm % heads:
        rejects.append(f"FalconH1Config rejects mamba_n_heads {heads}: it must divide the Mamba width {d_ssm}")
    elif d_head != "auto":
        d_head = r.int(None, "mamba_d_head")
        if d_head * heads != d_ssm:
            rejects.append(
                f"FalconH1Config rejects mamba_d_head {d_head}: mamba_n_heads x mamba_d_head = "
                f"{heads * d_head}, not the Mamba width {d_ssm}"
            )
    conv_dim = d_ssm + 2 * groups * d_state
    mixer = mamba2_mixer(heads, d_ssm, d_state, groups, taps, in_bias=proj_bias, out_bias=out_bias)
    other = conv_dim * taps + (conv_dim if conv_bias else 0) + 3 * heads + (d_ssm if rms_norm else 0)
    return mixer, other


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "hidden_size", default=_D["hidden"])
    n_layers = r.int("num_layers", "num_hidden_layers", default=_D["layers"])
    heads, kv, hd = r.attention_dims(h, heads_default=_D["heads"], kv_default=_D["kv"])
    if r.doc.has(r.path("num_key_value_heads")) and r.raw("num_key_value_heads") is None:
        kv = heads  # FalconH1Config.__post_init__: None -> num_attention_heads
    inter = r.int("intermediate_size", "intermediate_size", default=_D["inter"])
    vocab = r.int("vocab_size", "vocab_size", default=_D["vocab"])
    bias = r.bool(None, "attention_bias", default=False)
    rejects: list[str] = []
    mamba, mamba_other = _mamba(r, h, rejects)
    attn = heads_attention(heads, kv, hd, qkv_bias=bias, o_bias=bias)
    ffn = FFN(kind="dense", intermediate_size=inter, gated=True, bias=r.bool(None, "mlp_bias", default=False))
    kind = LayerKind(
        name="attention/full|mamba+dense", mixer=attn, parallel_mixer=mamba, ffn=ffn, other_params=2 * h + mamba_other
    )
    t = KindTable()
    for _ in range(n_layers):
        t.add(kind)
    return r.header_spec(
        Header(h, n_layers, heads, kv, hd, inter, vocab, tie_embeddings(r, False)),
        t,
        act_default="silu",
        extra_params=h,
        loader_rejects=rejects,
        notes=["every layer runs attention and a Mamba-2 block in parallel (parallel_mixer): both are costed"],
    )
