# The documentation site: `python -m sphinx -W -b html docs docs/_build/html` (the docs extra installs Sphinx
# and MyST). The pages are the Markdown files GitHub shows; tests/test_docs.py builds them with -W.
import os
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

ROOT = Path(os.path.abspath(__file__)).parent.parent
project = "dltensor"
author = "the dltensor authors"
copyright = "the dltensor authors (BSD-3-Clause)"
release = re.search(r'__version__ = "([^"]+)"', (ROOT / "python" / "dltensor" / "__init__.py").read_text()).group(1)
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 4  # GitHub's heading anchors: the pages link each other's sections as GitHub does
html_theme = "alabaster"
html_title = f"dltensor {release}"

# Links to the repository's own files outside docs/ (../tests/..., ../cpp/examples/...): MyST makes a file a
# download and leaves a folder or another Markdown file unresolved. On Read the Docs those become links to
# the built commit on GitHub; elsewhere their text. A link to no existing path is left to MyST, whose
# warning fails the -W build.
_clone = os.environ.get("READTHEDOCS_GIT_CLONE_URL", "")
_commit = os.environ.get("READTHEDOCS_GIT_COMMIT_HASH", "")
_m = re.match(r"(?:https://|git@)github\.com[/:](.+?)(?:\.git)?/?$", _clone)
SOURCE_URL = f"https://github.com/{_m.group(1)}/blob/{_commit}" if _m and _commit else None


def _repository_path(app, node):
    """The repository path a MyST link names outside docs/, or None."""
    target = node.get("reftarget", "")
    if node.get("refdomain") == "doc":  # a Markdown file outside the source folder, as a document name
        file = Path(target if Path(target).is_absolute() else Path(app.srcdir) / target).with_suffix(".md")
    elif node.get("refdomain") in (None, "") and "://" not in target and not target.startswith("#"):
        file = Path(app.env.doc2path(node["refdoc"])).parent / target.split("#", 1)[0]
    else:
        return None
    file = Path(os.path.normpath(file))  # not resolve(): a path is the repository's by where it is named
    if not file.exists() or not file.is_relative_to(ROOT) or file.is_relative_to(Path(os.path.abspath(app.srcdir))):
        return None
    return file.relative_to(ROOT).as_posix()


def _link_repository_paths(app, doctree):
    for node in list(doctree.findall(addnodes.pending_xref)):
        if node.get("reftype") != "myst":
            continue
        path = _repository_path(app, node)
        if path is None:
            continue
        content = node.children[0].deepcopy() if node.children else nodes.literal(path, path)
        node.replace_self(nodes.reference("", "", content, refuri=f"{SOURCE_URL}/{path}") if SOURCE_URL else content)


def setup(app):
    app.connect("doctree-read", _link_repository_paths)
