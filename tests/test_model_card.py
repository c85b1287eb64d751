"""Model cards: built on huggingface_hub's ModelCard, read back with every split's
metrics, rebuilt by `hf-numbers card`, and what `train --push_to_hub` and `model.push_to_hub` would
send, with the Hub API replaced at its boundary (HfApi's methods) and every socket refused."""

from __future__ import annotations

import contextlib
import io
import json
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from huggingface_hub import HfApi, ModelCard, RepoUrl
from huggingface_hub.errors import EntryNotFoundError
from model_helpers import tiny_config, tiny_model
from transformers import AutoModel, AutoTokenizer

from hf_numbers import NUMBER_ENCODINGS_REGISTRY
from hf_numbers.cli import main as cli_main
from hf_numbers.training import NumberTrainingArguments
from hf_numbers.training.model_card import build_model_card, hub_id_of_folder, model_card_from_run

CLI = ["--task", "lookup", "--train_size", "64", "--eval_size", "8", "--hidden_size", "32", "--num_layers", "2",
       "--num_heads", "2", "--vocab_size", "150", "--per_device_train_batch_size", "8", "--logging_steps", "2",
       "--disable_tqdm", "true", "--use_cpu", "true", "--max_steps", "4", "--save_steps", "0", "--eval_steps", "0"]
CODE_FILES = {"configuration_number.py", "modeling_number.py", "modeling_number_base.py", "tokenization_number.py",
              "pipeline_number.py", "hub_card.py", "encoding_xval.py",
              "encoding_fone.py", "encoding_float.py", "encoding_exponent.py", "parsing.py"}
SECRET = "hf_not_a_real_token"


def _refuse_connections(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("a test of the Hub upload opened a network connection")


class FakeHub:
    """HfApi's network methods, recording what they would send: create_repo (the token's namespace is "me"),
    upload_folder (the files of the folder, read at the call), create_commit (each operation's bytes)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def install(self, patch: pytest.MonkeyPatch) -> None:
        hub = self

        def create_repo(self: HfApi, repo_id: str, **kwargs: Any) -> RepoUrl:
            hub.calls.append(("create_repo", {"repo_id": repo_id, "token": self.token, **kwargs}))
            return RepoUrl(f"https://huggingface.co/{repo_id if '/' in repo_id else 'me/' + repo_id}")

        def upload_folder(self: HfApi, *, repo_id: str, folder_path: str | Path, **kwargs: Any) -> str:
            files = {p.name: p.read_bytes() for p in Path(folder_path).iterdir() if p.is_file()}
            hub.calls.append(("upload_folder", {"repo_id": repo_id, "folder_path": Path(folder_path),
                                                "token": self.token, "files": files, **kwargs}))
            return "commit"

        def create_commit(self: HfApi, repo_id: str, operations: list, **kwargs: Any) -> str:
            files = {op.path_in_repo: Path(op.path_or_fileobj).read_bytes() for op in operations}
            hub.calls.append(("create_commit", {"repo_id": repo_id, "files": files, **kwargs}))
            return "commit"

        def no_remote_card(*args: Any, **kwargs: Any) -> None:  # a new repository: no README.md yet
            raise EntryNotFoundError("README.md")

        patch.setattr(HfApi, "create_repo", create_repo)
        patch.setattr(HfApi, "upload_folder", upload_folder)
        patch.setattr(HfApi, "create_commit", create_commit)
        patch.setattr("huggingface_hub.repocard.hf_hub_download", no_remote_card)
        patch.setattr(socket.socket, "connect", _refuse_connections)

    def sent(self, method: str) -> list[dict[str, Any]]:
        return [kwargs for name, kwargs in self.calls if name == method]


@pytest.fixture(scope="module")
def pushed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, FakeHub, str]:
    """`hf-numbers train --push_to_hub` of a tiny run, the Hub replaced: its run folder, the fake Hub, the output."""
    run = tmp_path_factory.mktemp("cards") / "tiny-lookup"
    hub, printed = FakeHub(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        hub.install(patch)
        cli_main(["train", *CLI, "--output_dir", str(run), "--license", "mit", "--push_to_hub", "true",
                  "--hub_token", SECRET, "--hub_private_repo", "true"])
    return run, hub, printed.getvalue()


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    hub = FakeHub()
    hub.install(monkeypatch)
    return hub


def _card(data: bytes | str) -> ModelCard:
    return ModelCard(data.decode() if isinstance(data, bytes) else data)


def test_train_push_to_hub_uploads_the_whole_final_folder(pushed_run: tuple[Path, FakeHub, str]) -> None:
    run, hub, printed = pushed_run
    assert [name for name, _ in hub.calls] == ["create_repo", "upload_folder"]  # the repository first, then one upload
    (created,) = hub.sent("create_repo")
    assert created["repo_id"] == "tiny-lookup" and created["token"] == SECRET  # default name: output_dir's
    assert created["private"] is True and created["exist_ok"] is True
    (upload,) = hub.sent("upload_folder")
    assert (upload["repo_id"], upload["folder_path"], upload["token"]) == ("me/tiny-lookup", run / "final", SECRET)
    files = upload["files"]
    assert {"config.json", "model.safetensors", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
            "README.md"} | CODE_FILES <= set(files)
    assert files == {p.name: p.read_bytes() for p in (run / "final").iterdir()}  # the final folder, whole
    card = _card(files["README.md"])
    assert card.data.model_name == "me/tiny-lookup" and 'pipeline(model="me/tiny-lookup"' in card.text
    assert "uploaded to the Hub: me/tiny-lookup" in printed
    assert json.loads((run / "summary.json").read_text())["hub_model_id"] == "me/tiny-lookup"
    recorded = json.loads((run / "training_args.json").read_text())
    assert recorded["push_to_hub"] is True and recorded["hub_token"] is None  # the token is never written
    assert not [p for p in run.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


def test_the_card_reads_back_with_every_split_and_the_metadata(pushed_run: tuple[Path, FakeHub, str]) -> None:
    run, _, _ = pushed_run
    card = ModelCard.load(run / "final" / "README.md")
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics) == {"validation", "test", "test_ood"}
    results = {(r.dataset_split, r.metric_type): r for r in card.data.eval_results}
    assert {split for split, _ in results} == set(metrics)
    for split, values in metrics.items():
        reported = {name: value for name, value in values.items()
                    if value is not None and not name.endswith("count")}  # fmt: skip
        assert {name: results[split, name].metric_value for name in reported} == reported
        assert (split, "count") not in results
    result = next(iter(results.values()))
    assert (result.task_type, result.task_name, result.dataset_type) == ("text-generation", "number-generation",
                                                                         "lookup")  # fmt: skip
    data = card.data
    assert (data.library_name, data.license, data.pipeline_tag, data.base_model) == (
        "transformers", "mit", "text-generation", None)
    assert {"hf_numbers", "xval", "gpt2"} <= set(data.tags)
    for section in ("## Use", "## Training data", "## Evaluation", "## Training procedure", "## Limits"):
        assert section in card.text
    assert "max_new_tokens=3)" in card.text and "| test_ood | 8 |" in card.text and '"max_steps": 4' in card.text
    assert str(ModelCard(str(card))) == str(card)  # a stable round trip


def test_the_card_command_rebuilds_the_card(pushed_run: tuple[Path, FakeHub, str], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    run, _, _ = pushed_run
    written = (run / "final" / "README.md").read_text()
    cli_main(["card", str(run), "--output", str(tmp_path / "same.md")])
    assert (tmp_path / "same.md").read_text() == written  # the same code as training: the same card
    cli_main(["card", str(run / "final"), "--output", str(tmp_path / "other.md"), "--model_id", "org/other",
              "--license", "apache-2.0"])
    other = ModelCard.load(tmp_path / "other.md")
    assert other.data.model_name == "org/other" and other.data.license == "apache-2.0"
    assert 'pipeline(model="org/other"' in other.text and len(other.data.eval_results) == len(
        ModelCard.load(run / "final" / "README.md").data.eval_results)
    assert "model card:" in capsys.readouterr().out
    for argv, message in (([str(tmp_path)], "is not a finished run folder"),
                          ([str(run), "--base_model", "not a repo"], "Repo id must")):
        with pytest.raises(SystemExit) as exit_info:
            cli_main(["card", *argv])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_model_push_to_hub_sends_the_checkpoint_card(pushed_run: tuple[Path, FakeHub, str], fake_hub: FakeHub,
                                                     tmp_path: Path) -> None:
    run, _, _ = pushed_run
    model = AutoModel.from_pretrained(run / "final")
    assert model.model_card is not None and model.model_card.data.model_name == "me/tiny-lookup"
    model.push_to_hub("pushed", tags=["extra-tag"])
    (commit,) = fake_hub.sent("create_commit")
    assert commit["repo_id"] == "me/pushed"
    assert {"config.json", "model.safetensors", "README.md"} | CODE_FILES - {"tokenization_number.py"} <= set(
        commit["files"])
    card = _card(commit["files"]["README.md"])
    assert card.data.model_name == "me/pushed" and 'pipeline(model="me/pushed"' in card.text
    assert "me/tiny-lookup" not in card.text and {"hf_numbers", "extra-tag"} <= set(card.data.tags)
    assert {r.dataset_split for r in card.data.eval_results} == {"validation", "test", "test_ood"}

    model.save_pretrained(tmp_path / "saved", push_to_hub=True, repo_id="me/saved")  # the other way to push
    sent = _card(fake_hub.sent("create_commit")[-1]["files"]["README.md"])
    assert sent.data.model_name == "me/saved" and sent.data.eval_results
    assert _card((tmp_path / "saved" / "README.md").read_text()).data.model_name == "me/saved"

    tokenizer = AutoTokenizer.from_pretrained(run / "final")  # transformers keeps the repository's card
    (tmp_path / "remote.md").write_bytes(commit["files"]["README.md"])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("huggingface_hub.repocard.hf_hub_download", lambda *args, **kwargs: str(tmp_path / "remote.md"))
        tokenizer.push_to_hub("pushed")
    kept = _card(fake_hub.sent("create_commit")[-1]["files"]["README.md"])
    assert {"tokenizer.json", "README.md"} <= set(fake_hub.sent("create_commit")[-1]["files"])
    assert kept.data.model_name == "me/pushed" and len(kept.data.eval_results) == len(card.data.eval_results)

    model.model_card = None  # opting out: transformers' own card
    model.push_to_hub("generic")
    generic = _card(fake_hub.sent("create_commit")[-1]["files"]["README.md"])
    assert not generic.data.eval_results and "hf_numbers" not in (generic.data.tags or [])


def test_a_folder_without_an_hf_numbers_card_keeps_none(tmp_path: Path) -> None:
    tiny_model("gpt2", "fone").save_pretrained(tmp_path)
    assert AutoModel.from_pretrained(tmp_path).model_card is None
    (tmp_path / "README.md").write_text("---\nlicense: mit\ntags: [bert]\n---\nA plain backbone's card.\n")
    assert AutoModel.from_pretrained(tmp_path).model_card is None


def _arguments(**overrides: Any) -> dict[str, Any]:
    return NumberTrainingArguments(task="lookup", train_size=8, eval_size=4, **overrides).to_dict()


def test_non_finite_and_missing_metrics_keep_the_metadata_valid() -> None:
    metrics = {"test": {"count": 3, "mse": float("nan"), "r2": float("-inf"), "exact_match": np.float64(0.5),
                        "r2_log": None, "within_1pct": np.float32(0.25)}}  # fmt: skip
    card = build_model_card(_arguments(), metrics, tiny_config("gpt2", "xval"), model_id="runs/x/final", steps=3)
    header = str(card).split("---")[1]
    assert "nan" not in header and "inf" not in header and "!!" not in header  # no YAML tags of Python objects
    metadata = yaml.safe_load(header)
    json.dumps(metadata, allow_nan=False)  # strict JSON, as the Hub stores metadata
    values = {r.metric_type: r.metric_value for r in ModelCard(str(card)).data.eval_results}
    assert values == {"exact_match": 0.5, "within_1pct": 0.25} and all(type(v) is float for v in values.values())
    assert "| test | 3 | nan | -inf | 0.5000 | – | 0.2500 |" in card.text  # the table shows every value


def test_base_model_license_and_a_masked_model(tmp_path: Path) -> None:
    cached = tmp_path / "hub" / "models--org--tiny-bert" / "snapshots" / "abc123"
    cached.mkdir(parents=True)
    (cached / "README.md").write_text("---\nlicense: apache-2.0\ntags: [bert]\n---\nThe backbone's card.\n")
    assert hub_id_of_folder(cached) == "org/tiny-bert" and hub_id_of_folder(tmp_path) is None
    config = tiny_config("bert", "fone")
    example = {"text": "x = 1.5 and y = 2.5", "prompt": "x = 1.5 and y = ", "answer_index": 1, "answer_text": "2.5"}
    card = build_model_card(_arguments(backbone="bert", number_encoding="fone", pretrained=str(cached),
                                       freeze_backbone=True),
                            {"test": {"mse": 0.1}}, config, model_id="me/bert", example=example, mask_token="[MASK]")
    data = card.data
    assert (data.base_model, data.license, data.pipeline_tag) == ("org/tiny-bert", "apache-2.0", "fill-mask")
    assert data.eval_results[0].task_type == "fill-mask" and "frozen trunk" in card.text
    assert "pipe('x = 1.5 and y = [MASK]', top_k=3)" in card.text and "true value: 2.5" in card.text

    explicit = build_model_card(_arguments(pretrained=str(tmp_path), base_model="gpt2", license="mit"), {},
                                tiny_config("gpt2", "fone"), model_id="runs/y/final")
    assert (explicit.data.base_model, explicit.data.license) == ("gpt2", "mit") and "Not evaluated." in explicit.text
    local = build_model_card(_arguments(pretrained=str(tmp_path)), {}, tiny_config("gpt2", "fone"), model_id="y")
    assert local.data.base_model is None and local.data.license is None
    assert f"the folder `{tmp_path}`" in local.text and "No license was chosen" in local.text

    # a text baseline writes a number as several tokens; the prompt loses its trailing space (GPT-2's " [NUM]")
    text = build_model_card(_arguments(number_encoding="p10"), {}, tiny_config("gpt2", "p10"), model_id="z",
                            example=example)
    assert "pipe('x = 1.5 and y =', max_new_tokens=16)" in text.text and "no number scaling" in text.text


@pytest.mark.parametrize("encoding", [name for name, entry in NUMBER_ENCODINGS_REGISTRY.items()
                                      if entry.adds_digit_values])
def test_a_value_aware_digits_card_says_what_was_added_and_how_it_was_adapted(encoding: str, tmp_path: Path) -> None:
    """Value-aware digits adapted with LoRA + NTL (``--pretrained``'s default): the card says the module is there,
    the digit order and how it was adapted (before: "a text baseline ... the plain Llama")."""
    arguments = _arguments(backbone="llama", number_encoding=encoding, pretrained=str(tmp_path), lora_r=4,
                           number_token_loss="ntl", text_digit_order="units_first", digit_lookahead=2)
    config = tiny_config("llama", encoding, text_digit_order="units_first")
    card = build_model_card(arguments, {}, config, model_id="runs/v/final").text
    assert "value-aware digits" in card and "text baseline" not in card and config.digits_features in card
    adapted = ("with LoRA adapters of rank 4 (merged into these weights) and the number-token loss (ntl, weight 0.3) "
               "and the digit lookahead (2 digits ahead, weight 1.0; its heads are for training only)")
    assert "units first" in card and adapted in card


def test_card_and_hub_arguments_are_checked() -> None:
    assert NumberTrainingArguments(output_dir="runs/lookup-fone", push_to_hub=True).hub_repo_id == "lookup-fone"
    with pytest.raises(ValueError, match="base_model .* needs --pretrained"):
        NumberTrainingArguments(base_model="org/name")
    with pytest.raises(ValueError, match="hub_model_id 'a/b/c' is not a Hub repository id"):
        NumberTrainingArguments(push_to_hub=True, hub_model_id="a/b/c")
    NumberTrainingArguments(hub_model_id="a/b/c")  # checked only when pushing, as TrainingArguments does
    assert NumberTrainingArguments(hub_token=SECRET).to_dict()["hub_token"] is None


def test_an_older_run_folder_gets_a_card(tmp_path: Path, pushed_run: tuple[Path, FakeHub, str]) -> None:
    """A run of an earlier hf_numbers: arguments under their old names, no summary.json, no card to reuse."""
    run, _, _ = pushed_run
    old = tmp_path / "old"
    (old / "final").mkdir(parents=True)
    for path in (run / "final").iterdir():
        if path.name != "README.md":
            (old / "final" / path.name).write_bytes(path.read_bytes())
    arguments = json.loads((run / "training_args.json").read_text())
    arguments["per_device_batch_size"] = arguments.pop("per_device_train_batch_size")
    for name in ("license", "base_model", "push_to_hub", "hub_model_id", "hub_token", "hub_private_repo"):
        arguments.pop(name)
    (old / "training_args.json").write_text(json.dumps(arguments))
    (old / "metrics.json").write_text(json.dumps({"test": {"count": 8, "mse": None, "exact_match": 0.25}}))
    (old / "log_history.json").write_text(json.dumps([{"step": 2, "loss": 1.0}, {"step": 4, "loss": 0.5}]))
    card = model_card_from_run(old)
    assert card.data.model_name == str(old / "final") and card.data.license is None
    assert [(r.dataset_split, r.metric_type, r.metric_value) for r in card.data.eval_results] == [
        ("test", "exact_match", 0.25)]
    assert "After 4 optimizer steps" in card.text and '"per_device_batch_size": 8' in card.text
