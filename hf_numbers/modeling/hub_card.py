"""The model card a number model pushes to the Hub: the hf_numbers card of the folder it was loaded from.

``from_pretrained`` of a local folder holding an hf_numbers card keeps it in ``model.model_card``,
and ``push_to_hub`` uploads it (with the repository's id as its name) instead of transformers'
generic card, so the Hub shows the run's metrics and usage. ``model.model_card = None`` pushes
transformers' card instead (docs/hub.md).

Example:
    >>> model = AutoModel.from_pretrained("runs/demo/final")  # doctest: +SKIP
    >>> model.push_to_hub("me/temperature-xval")  # README.md: that card, for "me/temperature-xval"  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import ModelCard

__all__ = ["CARD_FILE", "CARD_TAG", "NumberModelCardMixin", "card_for_repo", "read_model_card"]

CARD_FILE = "README.md"
CARD_TAG = "hf_numbers"
"""The tag that marks a card written by hf_numbers (only such a card is kept by ``from_pretrained``)."""
_logger = logging.getLogger(__name__)


def read_model_card(folder: str | os.PathLike) -> ModelCard | None:
    """The hf_numbers model card in ``folder`` (its ``README.md``, tagged ``hf_numbers``); None if there is none.

    Another card (a plain backbone's, a hand-written one without the tag) is not an hf_numbers card:
    None. An unreadable one is None with a warning, so that it never stops a model from loading.

    Example:
        >>> read_model_card("/nonexistent") is None
        True
    """
    path = Path(folder) / CARD_FILE
    if not path.is_file():
        return None
    try:
        card = ModelCard.load(path)
    except (OSError, ValueError, yaml.YAMLError) as error:
        _logger.warning("%s: not a readable model card (%s); push_to_hub will use transformers' card", path, error)
        return None
    return card if CARD_TAG in (card.data.tags or []) else None


def card_for_repo(card: ModelCard, repo_id: str, extra_tags: list[str] | None = None) -> ModelCard:
    """A copy of ``card`` for the Hub repository ``repo_id``: its ``model_name`` (the name the card was
    written for, which its usage snippet quotes) becomes ``repo_id`` everywhere, and ``extra_tags`` are added.

    Example:
        >>> card = ModelCard('---\\nmodel_name: runs/a\\ntags: [hf_numbers]\\n---\\npipeline(model="runs/a")')
        >>> new = card_for_repo(card, "me/a", ["demo"])
        >>> new.text, new.data.model_name, new.data.tags
        ('pipeline(model="me/a")', 'me/a', ['hf_numbers', 'demo'])
    """
    copy = ModelCard(str(card))
    old = copy.data.model_name
    if old and old != repo_id:
        copy.text = copy.text.replace(f'"{old}"', f'"{repo_id}"').replace(f"`{old}`", f"`{repo_id}`")
    copy.data.model_name = repo_id
    copy.data.tags = list(dict.fromkeys([*(copy.data.tags or []), *(extra_tags or [])]))
    return copy


class NumberModelCardMixin:
    """``model_card`` and the upload of it on ``push_to_hub`` (see the module docstring).

    ``NumberModelMixin`` inherits it; ``from_pretrained`` calls :meth:`_keep_model_card`.
    """

    model_card: ModelCard | None = None
    """The card ``push_to_hub`` uploads; None: transformers' own."""

    def _keep_model_card(self, folder: str | os.PathLike) -> None:
        """Keep the hf_numbers card of a local ``folder`` (a Hub id or a folder without one keeps None)."""
        self.model_card = read_model_card(folder) if Path(folder).is_dir() else None

    def _upload_modified_files(self, working_dir: str | os.PathLike, repo_id: str, *args: Any, **kwargs: Any) -> Any:
        """transformers' upload of a saved folder (``push_to_hub`` and ``save_pretrained(push_to_hub=True)`` end
        here, after writing their card to ``README.md``): with a ``model_card``, that card is replaced by it, for
        ``repo_id`` and with the tags of transformers' card."""
        if self.model_card is not None:
            path = Path(working_dir) / CARD_FILE
            tags = ModelCard.load(path).data.tags if path.is_file() else None
            card_for_repo(self.model_card, repo_id, tags).save(path)
        return super()._upload_modified_files(working_dir, repo_id, *args, **kwargs)
