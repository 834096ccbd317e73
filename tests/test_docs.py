"""The documentation holds in a clean checkout: every relative link in README.md and docs/*.md names a
file inside the repository (and, with a #fragment, a heading of that file), the reference names every
annotation tag the headers define, and nothing in the repository points at the contract that lives
outside it."""
import re
import subprocess
from pathlib import Path

import pytest
from generated_blocks import read_block

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REFERENCE = ROOT / "docs" / "reference.md"
HEADERS = ROOT / "cpp" / "include" / "dltensor"

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # https:, mailto:, ...


def without_fences(text: str) -> str:
    return re.sub(r"^([ \t]*)```.*?^\1```[ \t]*$", "", text, flags=re.S | re.M)


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code spans (where links are not links)."""
    return re.sub(r"`[^`\n]*`", "", without_fences(text))


def links(doc: Path):
    return LINK.findall(prose(doc.read_text()))


def anchors(doc: Path) -> set:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen, out = {}, set()
    for line in without_fences(doc.read_text()).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        heading = re.sub(r"`", "", m.group(1)).strip().lower()
        slug = re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_the_documents_are_found():
    names = {d.relative_to(ROOT).as_posix() for d in DOCS}
    assert {"README.md", "docs/reference.md", "docs/migration.md"} <= names


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve_inside_the_repository(doc):
    bad = []
    for target in links(doc):
        if EXTERNAL.match(target):
            continue
        path, _, fragment = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.is_relative_to(ROOT):
            bad.append(f"{target}: outside the repository")
        elif not file.exists():
            bad.append(f"{target}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            bad.append(f"{target}: no heading #{fragment} in {file.relative_to(ROOT).as_posix()}")
    assert not bad, f"{doc.relative_to(ROOT).as_posix()}: {bad}"


def test_readme_links_the_reference_and_the_guide():
    targets = links(ROOT / "README.md")
    assert "docs/reference.md" in targets and "docs/migration.md" in targets


def tracked_files():
    """The files git tracks, plus new files it does not ignore, that the working tree holds (names relative
    to the checkout); None outside a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [name for name in filter(None, out.decode().split("\0")) if (ROOT / name).is_file()]


def tracked_text_files():
    """(name, text) of tracked_files() that are not binary; None outside a git checkout."""
    names = tracked_files()
    if names is None:
        return None
    texts = ((name, (ROOT / name).read_bytes()) for name in names)
    return [(name, data.decode("utf-8", errors="replace")) for name, data in texts if b"\0" not in data[:8192]]


def test_nothing_points_at_the_contract_outside_the_repository():
    files = tracked_text_files()
    if files is None:
        pytest.skip("not a git checkout")
    needle = "shared/" + "API.md"  # spelled in two pieces so that this file does not match itself
    hits = [f"{name}:{n}" for name, text in files
            for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert not hits, f"mentions of {needle} (the reference is docs/reference.md): {hits}"


def tags(macro: str) -> list:
    names = re.findall(rf"{macro}\((\w+),", (HEADERS / "tensor" / "annotations.h").read_text())
    return [n for n in names if n != "Name"]  # the macro's own definition


@pytest.mark.parametrize("name", ["shape", "ndim", "ro", "c_contig", "f_contig", "any_contig", "float16",
                                  "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                                  "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu",
                                  *tags("DLTENSOR_DEVICE"), *tags("DLTENSOR_FRAMEWORK")])
def test_reference_names_every_annotation(name):
    assert re.search(rf"`[^`]*\b{name}\b[^`]*`", REFERENCE.read_text()), f"docs/reference.md never names {name}"


@pytest.mark.parametrize("name", ["fast_paths_enabled", "torch_key_set_enabled", "empty", "cast", "stream", "view",
                                  "include_dir", "cmake_dir", "reference_internal", "noconvert", "try_cast", "last_refusal",
                                  "explain_last_refusal", "unchecked", "mutable_unchecked"])
def test_reference_names_the_api(name):
    assert name in REFERENCE.read_text()


def array_t_members() -> list:
    """The public member functions of array_t_members.h (the members and compile errors it adds)."""
    text = (HEADERS / "bindings" / "array_t_members.h").read_text().split("public:", 1)[1]
    names = re.findall(r"^ {4}(?! )(?:template <[^>]*>\s*)?(?:static\s+)?[\w:<>*& ]*?\b(\w+)\(", text, re.M)
    return sorted(set(names) - {"static_assert", "if", "for", "return"})


def test_array_t_members_are_found():
    assert {"data", "mutable_data", "at", "mutable_at", "adopt", "copy_of", "request"} <= set(array_t_members())


@pytest.mark.parametrize("name", array_t_members())
def test_reference_names_every_array_t_member(name):
    text = REFERENCE.read_text()
    assert f"`{name}(" in text or f"{name}()" in text or f"`{name}<" in text, name


def test_architecture_layout_lists_every_header():
    layout = (ROOT / "docs" / "architecture.md").read_text()
    names = [h.relative_to(HEADERS).as_posix() for h in sorted(HEADERS.rglob("*.h"))
             if not h.name.endswith("-inl.h") or h.name in ("core-inl.h", "process_wide-inl.h")]
    missing = [n for n in names if f"`cpp/include/dltensor/{n}`" not in layout]
    assert not missing, f"docs/architecture.md's layout table misses {missing}"


def test_backend_table_quotes_the_real_signature_text():
    # docs/getting-started.md's backends table quotes `squared_norms`'s parameter annotation as each backend prints it.
    from conftest import BACKENDS, load_backend
    row = next(line for line in (ROOT / "docs" / "getting-started.md").read_text().splitlines()
               if line.startswith("| signature text of"))
    quoted = re.findall(r"`([^`]*(?:ArrayLike|typing\.Annotated)\[[^`]*)`", row)
    assert len(quoted) == 2, row
    for backend, text in zip(["nanobind", "pybind11"], quoted):
        if backend not in BACKENDS:
            continue  # DLTENSOR_BACKENDS left it out (the quick subset): its module is not built
        assert f"pts: {text})" in load_backend(backend).common.squared_norms.__doc__, (backend, text)


def test_ci_times_are_the_recorded_measurement():
    # docs/contributing.md's timing tables are the rendering of the recorded CI run and the recorded full benchmark
    # (bench/results/bench_time.json): a typed or stale number fails.
    import json
    import setup_times
    expected = setup_times.render(json.loads(setup_times.TIMES.read_text()),
                                  json.loads(setup_times.BENCH_TIME.read_text()))
    assert read_block(setup_times.PAGE, setup_times.BLOCK) == expected


PYTORCH_INDEX = " --index-url https://download.pytorch.org/whl/cpu"


def readme_commands() -> list:
    """The one-line commands of README's `sh` blocks."""
    text = (ROOT / "README.md").read_text()
    return [line for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)
            for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("run", ["python bench/run.py", "python -m pytest"])
def test_readme_prints_each_setup_command_with_and_without_pytorchs_index(run):
    # Set up's commands 1 and 2, each with PyTorch's CPU index and in the PyPI-only form (the same line
    # without the option), which is what .ci/run installs torch with.
    commands = [c for c in readme_commands() if c.startswith("python3 -m venv .venv") and c.endswith(f"&& {run}")]
    with_index = [c for c in commands if PYTORCH_INDEX in c]
    assert len(with_index) == 1, commands
    assert with_index[0].replace(PYTORCH_INDEX, "") in commands, f"no PyPI-only form of {with_index[0]}"
    assert len(commands) == 2, commands
    torch_install = re.search(r"pip install (torch==\S+)", with_index[0]).group(1)
    assert re.search(rf"pip install --quiet {re.escape(torch_install)}$", (ROOT / ".ci" / "run").read_text(), re.M)


def test_readme_says_how_to_tell_which_setup_form_applies():
    readme = (ROOT / "README.md").read_text()
    assert "`pip config list`" in readme and "PyPI-only form" in readme and "torch.version.cuda" in readme


def bench_run():
    """bench/run.py as a module (its legend and notes; nothing is measured on import)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_block() -> str:
    return read_block(ROOT / "docs" / "benchmarks.md", "bench")


def test_benchmark_table_says_command_1_makes_no_paddle_rows():
    block, run = bench_block(), bench_run()
    assert run.LEGEND in block
    assert "\n| paddle: " in block, "the recorded table has paddle rows: this test checks their note"
    assert run.PADDLE_NOTE in block
    bench_extra = __import__("tomllib").loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["bench"]
    assert not [r for r in bench_extra if r.startswith("paddle")], "the note says the bench extra has no paddlepaddle"


def test_benchmark_table_says_under_what_load_it_was_measured():
    header = bench_block().strip().splitlines()[0]
    assert header.startswith("Per-call cost in ns") and ("load average" in header or "load not recorded" in header)


def test_setup_times_renders_each_steps_load_and_old_records_as_not_recorded():
    import setup_times
    bench = {"python bench/run.py": 62, "recorded": "2026-12-02"}
    times = {"pip install torch": {"seconds": 20, "load": [3.25, 2.0, 1.5]}, "pip install .[test]": 60,
             "python -m pytest": {"seconds": 1000, "load": [2.0, 2.0, 2.0]}, "pip install .[bench]": 8}
    text = setup_times.render(times, dict(bench, load=[1.0, 0.5, 0.25]))
    assert "| `pip install torch` | 20 s | load average 3.2, 2.0, 1.5 |" in text
    assert "| `pip install .[test]` | 60 s | load not recorded |" in text
    assert "| all of `.ci/run` | 18.1 minutes |" in text
    assert "2026-12-02, load average 1.0, 0.5, 0.2 at its end" in text
    assert "2026-12-02, load not recorded" in setup_times.render(times, bench)


def test_ci_run_records_each_steps_seconds_and_load(tmp_path):
    # The recorder .ci/run's step() runs, run here on a file: its output is what setup_times renders.
    import json
    import setup_times
    script = re.search(r"python3 -c '([^']*)' \\\n\s*\"\$TIMES\"", (ROOT / ".ci" / "run").read_text()).group(1)
    times = tmp_path / "times.json"
    times.write_text("{}")
    subprocess.run(["python3", "-c", script, str(times), "pip install torch", "21"], check=True)
    (record,) = json.loads(times.read_text()).values()
    assert record["seconds"] == 21 and len(record["load"]) == 3
    assert setup_times.step_record(record) == (21, record["load"])


def test_ci_run_total_is_added_to_the_runs_only_when_the_run_passed(tmp_path):
    # .ci/run's EXIT trap records the whole run ("total"); --add-run appends it to the runs docs/contributing.md lists.
    import json
    import setup_times
    script = re.search(r"python3 -c '([^']*)' \\\n\s*\"\$DLTENSOR_CI_TIMES\"", (ROOT / ".ci" / "run").read_text()).group(1)
    times = tmp_path / "times.json"
    times.write_text(json.dumps({"pip install torch": 20, "pip install .[test]": 60, "pip install .[bench]": 8,
                                 "python -m pytest": {"seconds": 900, "load": [1.0, 1.0, 1.0]}}))
    subprocess.run(["python3", "-c", script, str(times), "1500", "1", "abc"], check=True)
    runs = tmp_path / "runs.json"
    with pytest.raises(SystemExit, match="failed"):
        setup_times.add_run(json.loads(times.read_text()), runs)
    assert not runs.exists()
    subprocess.run(["python3", "-c", script, str(times), "1500", "0", "abc"], check=True)
    run = setup_times.add_run(json.loads(times.read_text()), runs)
    assert run["seconds"] == 1500 and run["commit"] == "abc" and len(run["load"]) == 3
    setup_times.add_run(json.loads(times.read_text()), runs)  # the same run twice is listed once
    text = setup_times.render(json.loads(times.read_text()), {"python bench/run.py": 62, "recorded": "x"},
                              json.loads(runs.read_text()))
    assert "total" not in text.split("Whole runs")[0]  # the run's total is no step
    assert f"| {run['date']} | `abc` | 25.0 minutes | load average" in text


def test_docs_site_lists_every_page():
    index = (ROOT / "docs" / "index.md").read_text()
    toctree = re.search(r"^```\{toctree\}\n(.*?)^```", index, flags=re.S | re.M).group(1)
    listed = {line.strip() for line in toctree.splitlines() if line.strip() and not line.startswith(":")}
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")} - {"index"}
    assert listed == pages, (listed, pages)


def sphinx_build(docs: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    """`python -m sphinx -q -b html <docs> <out>`, as README's Documentation builds the site."""
    pytest.importorskip("sphinx", reason="the docs extra (also in the test extra) installs Sphinx")
    pytest.importorskip("myst_parser", reason="the docs extra (also in the test extra) installs MyST")
    import sys
    return subprocess.run([sys.executable, "-m", "sphinx", *options, "-q", "-b", "html", str(docs), str(out)],
                          capture_output=True, text=True)


def test_docs_site_builds_without_a_warning(tmp_path):
    # The site as `python -m sphinx -W` builds it (README, Documentation): a broken link or anchor between
    # pages, or to a repository file, is a warning, so an error.
    done = sphinx_build(ROOT / "docs", tmp_path / "html", "-W", "--keep-going")
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ["index", "getting-started", "reference", "migration", "architecture", "benchmarks", "robustness",
                 "contributing"]:
        assert (tmp_path / "html" / f"{page}.html").is_file(), page


def test_docs_site_catches_a_broken_link(tmp_path):
    # The same build over a copy of the checkout's files with one link to no file: that link, and only it,
    # fails the build.
    import shutil
    names = tracked_files()
    if names is None:
        pytest.skip("not a git checkout")
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    page = tmp_path / "docs" / "robustness.md"
    page.write_text(page.read_text() + "\n[gone](../tests/no_such_file.py)\n")
    done = sphinx_build(tmp_path / "docs", tmp_path / "html")
    warnings = [line for line in (done.stdout + done.stderr).splitlines() if "WARNING" in line]
    assert len(warnings) == 1 and "no_such_file.py" in warnings[0], warnings


def test_read_the_docs_builds_the_site_from_the_docs_extra():
    import tomllib
    config = (ROOT / ".readthedocs.yaml").read_text()
    assert "configuration: docs/conf.py" in config and "fail_on_warning: true" in config
    assert re.search(r"extra_requirements:\s*\n\s*- docs\b", config)
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {r.split(">")[0] for r in extras["docs"]} == {"sphinx", "myst-parser"}
    assert set(extras["docs"]) <= set(extras["test"]), "the suite builds the site: the test extra has the docs extra"


def test_readme_is_a_front_door_to_every_page():
    # At most 200 lines (nanobind's README is 117, pybind11's 215): what, why, a package, the two commands,
    # what is supported, and a link to each page of the documentation, where everything else lives.
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200, len(text.splitlines())
    headings = re.findall(r"^## (.+)$", without_fences(text), re.M)
    assert headings == ["Why", "Use it in your package", "Set up", "Supported versions, compilers and platforms",
                        "Documentation", "License"], headings
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    linked = {t.split("#")[0].removeprefix("docs/") for t in links(ROOT / "README.md")}
    assert pages <= linked, pages - linked


def test_site_index_repeats_the_readme_commands():
    # The site has no README: its index shows commands 1 and 2 (the forms with PyTorch's index) as the
    # README prints them, since the other pages refer to them by number.
    def commands(path):
        return [line for line in path.read_text().splitlines() if line.startswith("python3 -m venv .venv")]
    index = commands(ROOT / "docs" / "index.md")
    assert index and index == [c for c in commands(ROOT / "README.md") if PYTORCH_INDEX in c], index


def test_generated_block_is_replaced_between_its_markers_only(tmp_path):
    from generated_blocks import write_block
    page = tmp_path / "page.md"
    page.write_text("intro\n<!-- t:start -->\nold\n<!-- t:end -->\noutro <!-- u:start -->\nkept\n<!-- u:end -->\n")
    assert write_block(page, "t", "\nnew\n") and read_block(page, "t") == "new"
    assert page.read_text() == "intro\n<!-- t:start -->\nnew\n<!-- t:end -->\noutro <!-- u:start -->\nkept\n<!-- u:end -->\n"
    assert not write_block(page, "t", "new")  # unchanged: the page is not rewritten
    with pytest.raises(ValueError, match="v:start"):
        write_block(page, "v", "x")
