"""``hf-numbers train --push_to_hub``: the Hub repository, made before training, and the upload of ``final/``.

Both use ``huggingface_hub.HfApi`` with ``--hub_token`` or the stored login.

Example:
    >>> args = NumberTrainingArguments(task="lookup", push_to_hub=True, hub_model_id="me/lookup")  # doctest: +SKIP
    >>> repo_id = create_hub_repo(args)  # doctest: +SKIP
    >>> push_folder("runs/demo/final", repo_id, args.hub_token)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from huggingface_hub import HfApi

from .arguments import NumberTrainingArguments

__all__ = ["create_hub_repo", "push_folder"]

_logger = logging.getLogger(__name__)


def create_hub_repo(args: NumberTrainingArguments) -> str:
    """Create (or reuse) the model repository ``args.hub_repo_id``; return its full id (``namespace/name``).

    Called before training, so that a bad token, name or connection fails before any work.
    """
    repo = HfApi(token=args.hub_token).create_repo(args.hub_repo_id, private=args.hub_private_repo, exist_ok=True)
    return repo.repo_id


def push_folder(folder: str | Path, repo_id: str, token: str | None = None) -> Any:
    """Upload every file of ``folder`` (a run's ``final/``: model, tokenizer, code, model card) to ``repo_id``
    in one commit; returns ``upload_folder``'s commit info. A failure is logged with the command that uploads
    the folder again (``hf upload``), then raised."""
    try:
        return HfApi(token=token).upload_folder(
            repo_id=repo_id, folder_path=folder, commit_message="Upload model trained with hf-numbers"
        )
    except Exception:
        _logger.error("the upload of %s to %s failed; the folder is complete: `hf upload %s %s` retries it",
                      folder, repo_id, repo_id, folder)  # fmt: skip
        raise
