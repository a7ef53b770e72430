"""Each encoder's and head's typed options (rnnbench.encoders.options, rnnbench.heads.options):
they describe the constructors exactly, every shipped config passes them, a typo in an option,
a value outside a choice or a wrong type is one line when the config is composed (before any
data is read), and checking changes nothing in the config (the pinned run identity in
tests/results/test_identity.py holds that for the identity itself)."""
from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect

import pytest
import yaml
from hydra import compose
from hydra.core.config_store import ConfigStore
from hydra.utils import get_class
from omegaconf import OmegaConf

from rnnbench import options
from rnnbench.compose import CONF_DIR, compose_config, initialize_hydra, sweeper_params
from rnnbench.config import KernelImpl, check_components, validate
from rnnbench.encoders import options as encoder_options
from rnnbench.errors import ConfigError
from rnnbench.heads import options as head_options
from rnnbench.results.identity import identity_config

ENCODERS = sorted(p.stem for p in (CONF_DIR / "encoder").glob("*.yaml"))
TASKS = sorted(p.stem for p in (CONF_DIR / "task").glob("*.yaml"))
EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
BUILDER_ARGUMENTS = {"self", "input_size", "embedding_dim", "encoder_output_size", "num_classes", "vocab"}


def _targets(group: str, path: tuple[str, ...]) -> set[str]:
    found = set()
    for file in (CONF_DIR / group).glob("*.yaml"):
        node = yaml.safe_load(file.read_text())
        for key in path:
            node = (node or {}).get(key) or {}
        if "_target_" in node:
            found.add(node["_target_"])
    return found


def _plain(value):
    """A default as a config writes it: enums as their values, tuples as lists."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def test_every_class_a_config_names_has_typed_options():
    named = _targets("encoder", ()) | _targets("task", ("task", "head"))
    assert named == set(options.SCHEMAS)


@pytest.mark.parametrize("target", sorted(options.SCHEMAS))
def test_the_options_are_the_constructors_arguments_with_its_defaults(target):
    parameters = inspect.signature(get_class(target).__init__).parameters
    constructor = {name: p.default for name, p in parameters.items() if name not in BUILDER_ARGUMENTS}
    schema = {f.name: _plain(f.default if f.default_factory is dataclasses.MISSING else f.default_factory())
              for f in dataclasses.fields(options.SCHEMAS[target]) if f.name not in options.NOT_OPTIONS}
    assert schema == {name: _plain(default) for name, default in constructor.items()}


@pytest.mark.parametrize("choices, module, constant", [
    (encoder_options.ListenerDirection, "rnnbench.encoders.rcrn", "LISTENER_DIRECTIONS"),
    (encoder_options.DisagreementNormalizer, "rnnbench.encoders.mzu", "NORMALIZERS"),
    (encoder_options.Composition, "rnnbench.kernels.mzu_transition", "COMPOSITIONS"),
    (encoder_options.LayerNorm, "rnnbench.kernels.mzu_transition", "LAYER_NORMS"),
    (encoder_options.GcnActivation, "rnnbench.kernels.mzu_transition.reference", "GCN_ACTIVATIONS"),
    (head_options.Pooling, "rnnbench.nn.util", "POOLERS"),
    (head_options.Readout, "rnnbench.heads.classifier", "READOUTS"),
    (head_options.Attention, "rnnbench.heads.span", "ATTENTIONS"),
    (head_options.Compare, "rnnbench.heads.span", "COMPARES"),
    (head_options.Pointer, "rnnbench.heads.span", "POINTERS"),
    (KernelImpl, "rnnbench.kernels.dispatch", "CHOICES"),
])
def test_each_choice_is_the_set_its_code_accepts(choices, module, constant):
    assert [c.value for c in choices] == list(getattr(importlib.import_module(module), constant))


def test_the_schemas_are_in_hydras_config_store():
    repo = ConfigStore.instance().repo["schema"]
    assert {f"{t.rsplit('.', 1)[1]}.yaml" for t in options.SCHEMAS} == set(repo["encoder"]) | set(repo["head"])
    lstm = OmegaConf.structured(repo["encoder"]["LSTMEncoder.yaml"].node)
    assert lstm._target_ == "rnnbench.encoders.lstm.LSTMEncoder" and lstm.residual == "none"


@pytest.mark.parametrize("encoder", ENCODERS)
def test_every_encoder_config_passes(encoder):
    check_components(compose_config([f"encoder={encoder}"]))


@pytest.mark.parametrize("task", TASKS)
def test_every_task_head_passes(task):
    check_components(compose_config([f"task={task}"]))


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_passes_with_each_encoder_of_its_sweep(experiment):
    for encoder in sweeper_params([f"experiment={experiment}"]).get("encoder", "").split(","):
        if encoder:
            check_components(compose_config([f"experiment={experiment}", f"encoder={encoder}"]))


# --- one line at composition ------------------------------------------------------------------

@pytest.mark.parametrize("overrides, said", [
    (["+encoder.hiden_size=100"],
     "encoder.hiden_size: not an option of rnnbench.encoders.lstm.LSTMEncoder (bilstm); did you mean hidden_size?"),
    (["task=trec", "+task.head.dropot=0.2"],
     "task.head.dropot: not an option of rnnbench.heads.classifier.ClassifierHead (task trec); did you mean dropout?"),
    (["encoder.cell=lsmt"], "encoder.cell=lsmt: must be one of lstm, gru"),
    (["encoder=mzu_cap", "encoder.disagreement_normalizer=per_token"],
     "encoder.disagreement_normalizer=per_token: must be one of token, token_mean, sequence"),
    (["task=sst5", "task.head.readout=last"], "task.head.readout=last: must be one of pool, final"),
    (["task=sst5", "task.head.pooling=[max,avg]"], "task.head.pooling=[max, avg]: must be a list of values among max, mean, min"),
    (["encoder.hidden_size=1.5"], "encoder.hidden_size=1.5: must be an integer"),
    (["encoder=mzu_sat", "encoder.ffn_size=wide"], "encoder.ffn_size=wide: must be an integer or null"),
    (["encoder.bidirectional=1"], "encoder.bidirectional=1: must be true or false"),
    (["encoder=dcu", "encoder.ranges=[1,two]"], "encoder.ranges=[1, two]: must be a list of integers"),
])
def test_a_bad_option_is_one_line_at_composition(overrides, said):
    with pytest.raises(ConfigError) as error:
        compose_config(overrides)
    assert str(error.value).startswith(said) and "\n" not in str(error.value)


def test_composition_lets_another_encoders_option_through_and_the_run_refuses_it(tmp_path):
    """An experiment's encoder block is shared by its sweep's encoders (FHE Table 2's FHE row sets
    the sparsity penalty): composed with another encoder it passes; a run of it is refused."""
    cfg = compose_config(["experiment=fhe_table2_fhe", "encoder=lstm1", f"paths.runs_dir={tmp_path}"])
    with pytest.raises(ConfigError, match=r"^encoder.sparsity_penalty: not an option of rnnbench.encoders.lstm.LSTMEncoder \(lstm1\)"):
        validate(cfg)
    validate(compose_config(["experiment=fhe_table2_fhe", "encoder=fhe", f"paths.runs_dir={tmp_path}"]))


def _composed_by_hydra(overrides: list[str]):
    """The config as `python train.py` composes it (Hydra's application, no compose_config)."""
    initialize_hydra()  # on the package's configs
    return compose(config_name="config", overrides=overrides)


@pytest.mark.parametrize("override, said", [
    ("+encoder.hiden_size=100", "encoder.hiden_size: not an option"),
    ("+task.head.dropot=0.2", "task.head.dropot: not an option"),
    ("encoder.cell=lsmt", "encoder.cell=lsmt: must be one of lstm, gru"),
])
def test_a_run_refuses_a_bad_option_before_any_data_is_read(tmp_path, monkeypatch, override, said):
    from rnnbench.results import identity
    from rnnbench.run import train

    empty = tmp_path / "data"
    empty.mkdir()
    monkeypatch.setenv("RNNBENCH_DATA", str(empty))  # no dataset here: a data error would mean too late
    monkeypatch.setattr(identity, "data_fingerprint", lambda *a, **k: pytest.fail("the data was read"))
    cfg = _composed_by_hydra(["task=trec", f"paths.runs_dir={tmp_path / 'runs'}", override])
    with pytest.raises(ConfigError, match=f"^{said}"):
        train(cfg)
    assert not (tmp_path / "runs" / "trec").exists()


@pytest.mark.slow  # a train.py process
def test_train_py_prints_the_bad_option_in_one_line(tmp_path):
    from tests.helpers import run_train_py

    out = run_train_py(["task=trec", "+encoder.hiden_size=100", f"paths.runs_dir={tmp_path / 'runs'}"],
                       env_extra={"RNNBENCH_DATA": str(tmp_path)})
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert out.stderr.startswith("error: encoder.hiden_size: not an option of rnnbench.encoders.lstm.LSTMEncoder (bilstm); "
                                 "did you mean hidden_size?")


# --- nothing changes ------------------------------------------------------------------------

@pytest.mark.parametrize("overrides", [
    ["task=picking", "encoder=bilstm", "embedding=random"],
    ["task=trec", "encoder=fhe"],  # an interpolated option (context_size)
    ["task=sst5", "encoder=rcrn", "+encoder.dropout=0.2"],
    ["experiment=mzu_table6_laptop_a_token", "encoder=mzu_cap"],
    ["trainer.precision=32", "trainer.kernel_impl=reference"],
])
def test_checking_changes_neither_the_config_nor_its_identity(overrides, tmp_path):
    overrides = [*overrides, f"paths.runs_dir={tmp_path}"]
    checked, plain = compose_config(overrides), _composed_by_hydra(overrides)
    validate(checked)
    assert OmegaConf.to_yaml(checked) == OmegaConf.to_yaml(plain)
    assert identity_config(checked) == identity_config(plain)


def test_a_default_the_yaml_leaves_out_stays_out():
    cfg = compose_config(["encoder=fhe"])  # fhe.yaml lists no dropout; FHEOptions has one
    assert "dropout" not in cfg.encoder and "dropout" in {f.name for f in dataclasses.fields(encoder_options.FHEOptions)}


def test_precision_stays_the_string_the_identity_holds():
    cfg = compose_config(["trainer.precision=32"])
    assert cfg.trainer.precision == "32" and isinstance(cfg.trainer.precision, str)


def test_a_class_without_typed_options_is_left_to_its_constructor():
    node = OmegaConf.create({"_target_": "my_package.MyEncoder", "name": "mine", "anything": 1})
    options.check(node, "encoder", "mine")  # no schema registered: nothing to compare with



@pytest.mark.parametrize("override, said", [
    ("encoder.hiden_size=100", "did you mean encoder.hidden_size?"),
    ("task.head.dropot=0.2", "did you mean task.head.dropout?"),
    ("encoder.xyzzy=1", "check its spelling (`python train.py --cfg job` prints every key)"),
])
def test_a_misspelt_key_without_plus_is_one_line_naming_the_key_nearest(override, said):
    """Without ``+`` Hydra itself refuses a key the config lacks; its report becomes one line that
    names the nearest existing key, or says how to list them when none is near."""
    from hydra.errors import HydraException

    from rnnbench.cli import config_error_line

    with pytest.raises(HydraException) as error:
        _composed_by_hydra(["task=trec", override])
    line = config_error_line(error.value)
    assert "\n" not in line and line.startswith(f"Could not override '{override.split('=')[0]}'") and line.endswith(said)
