"""Static checks of the conda environments (conda itself cannot be installed here)."""

import ast
import re
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"
# import name -> distribution name, where they differ
DISTRIBUTIONS = {"PIL": "pillow", "yaml": "pyyaml", "nvidia": "nvidia-dali-cuda120", "snakemake": "snakemake"}


def rule_envs_and_scripts():
    """(env file, script file) for every rule that has both, read from the rule files."""
    pairs = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text()
        for block in re.split(r"\n(?=\s*rule \w+:)", text):
            env = re.search(r'conda:\s*\n\s*"([^"]+)"', block)
            script = re.search(r'script:\s*\n\s*"([^"]+)"', block)
            if env and script:
                pairs.append(((smk.parent / env.group(1)).resolve(), (smk.parent / script.group(1)).resolve()))
    return pairs


def env_packages(env_file: Path) -> dict[str, str | None]:
    """{package: pinned version} of a conda env file, pip section included."""
    spec = yaml.safe_load(env_file.read_text())
    packages = {}
    for dep in spec["dependencies"]:
        entries = dep["pip"] if isinstance(dep, dict) else [dep]
        for entry in entries:
            name, _, version = re.split(r"(==|=)", entry, maxsplit=1) if "=" in entry else (entry, "", "")
            packages[name.strip().lower()] = version.strip() or None
    return packages


def third_party_imports(script: Path, seen=None) -> set[str]:
    """Top-level third-party modules a script imports, following imports of sibling scripts."""
    seen = seen if seen is not None else set()
    if script in seen:
        return set()
    seen.add(script)
    modules = set()
    for node in ast.walk(ast.parse(script.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if (SCRIPTS / f"{top}.py").exists():
                modules |= third_party_imports(SCRIPTS / f"{top}.py", seen)
            elif top not in sys.stdlib_module_names:
                modules.add(top)
    return modules


PAIRS = rule_envs_and_scripts()


def test_every_rule_with_a_script_has_an_env():
    assert len(PAIRS) >= 6, PAIRS


@pytest.mark.parametrize("env_file", sorted((REPO / "envs").glob("*.yaml")), ids=lambda p: p.name)
def test_env_parses_and_pins_everything(env_file):
    spec = yaml.safe_load(env_file.read_text())
    assert "nodefaults" in spec["channels"] or "conda-forge" in spec["channels"]
    packages = env_packages(env_file)
    assert "python" in packages
    unpinned = [name for name, version in packages.items() if version is None and name != "pip"]
    assert not unpinned, f"{env_file.name}: unpinned {unpinned}"


@pytest.mark.parametrize("env_file,script", PAIRS, ids=lambda p: Path(p).name)
def test_script_imports_are_declared_in_its_env(env_file, script):
    declared = set(env_packages(env_file))
    missing = {m for m in third_party_imports(script) if DISTRIBUTIONS.get(m, m).lower() not in declared}
    # snakemake injects its own object; the script never imports snakemake itself
    assert not missing, f"{script.name} imports {missing}, not in {env_file.name}"


def test_requirements_match_the_envs():
    """The pip path (README) installs the same versions as the conda envs."""
    pinned = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pinned[name.strip().lower()] = version.strip()
    for env_file in (REPO / "envs").glob("*.yaml"):
        for name, version in env_packages(env_file).items():
            if name in ("python", "pip"):
                continue
            assert pinned.get(name) == version, f"{name}: {env_file.name} pins {version}, requirements.txt {pinned.get(name)}"
