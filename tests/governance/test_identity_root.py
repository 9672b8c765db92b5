"""docs/identity-and-scope.md#repo-root: the repo root, with real git repositories made in tmp_path."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from hindsight_hooks.governance import identity as ident

GIT = shutil.which("git")


def git(*args: str, cwd: Path) -> str:
    assert GIT is not None, "git is required for these tests"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(cwd),
    )
    proc = subprocess.run(
        [GIT, "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)
    (path / "README").write_text("x\n")
    (path / "src" / "pkg").mkdir(parents=True)
    (path / "src" / "pkg" / "mod.py").write_text("pass\n")
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)
    return path


@pytest.fixture(autouse=True)
def fresh_memo() -> None:
    ident.clear_repo_root_cache()


def test_subfolders_resolve_to_the_toplevel(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "Alpha Repo")
    assert ident.find_repo_root(repo) == repo
    assert ident.find_repo_root(repo / "src") == repo
    assert ident.find_repo_root(repo / "src" / "pkg") == repo


def test_linked_worktree_resolves_to_the_main_worktree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "main")
    wt = tmp_path / "elsewhere" / "feature-wt"
    git("worktree", "add", "-q", "-b", "feature", str(wt), cwd=repo)
    assert (wt / ".git").is_file()  # a real linked worktree
    assert ident.find_repo_root(wt) == repo
    assert ident.find_repo_root(wt / "src" / "pkg") == repo
    assert ident.repo_key(ident.find_repo_root(wt)) == ident.repo_key(ident.find_repo_root(repo))


def test_nested_repository_is_its_own_root(tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer")
    inner = make_repo(outer / "vendor" / "inner")
    assert ident.find_repo_root(inner / "src") == inner
    assert ident.find_repo_root(outer / "src") == outer


def test_real_submodule_has_its_own_root(tmp_path: Path) -> None:
    lib = make_repo(tmp_path / "lib")
    sup = make_repo(tmp_path / "super")
    git("submodule", "add", "-q", str(lib), "deps/lib", cwd=sup)
    sub = sup / "deps" / "lib"
    assert (sub / ".git").is_file()
    assert ident.find_repo_root(sub / "src") == sub
    assert ident.find_repo_root(sup / "deps") == sup


def test_symlinked_cwd_resolves_through_realpath(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "real")
    link = tmp_path / "link"
    link.symlink_to(repo / "src")
    assert ident.find_repo_root(link) == repo


def test_no_repository_gives_cwd(tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "deeper"
    plain.mkdir(parents=True)
    assert ident.find_repo_root(plain) == Path(os.path.realpath(plain))


def test_git_failing_falls_back_to_the_first_dotgit(tmp_path: Path) -> None:
    # A ``.git`` file git cannot parse: rev-parse fails, the walk still finds the folder.
    top = tmp_path / "broken"
    (top / "a" / "b").mkdir(parents=True)
    (top / ".git").write_text("this is not a gitdir pointer\n")
    assert ident.find_repo_root(top / "a" / "b") == top


def test_git_missing_falls_back_to_the_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "r")
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", "-b", "w", str(wt), cwd=repo)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin-here"))
    assert ident.find_repo_root(repo / "src") == repo
    # Without git a linked worktree cannot be traced to its main worktree: its own folder.
    assert ident.find_repo_root(wt / "src") == wt


def test_a_hanging_git_is_abandoned_after_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake_git = fake_bin / "git"
    fake_git.write_text("#!/bin/sh\nsleep 5\n")
    fake_git.chmod(0o755)
    top = tmp_path / "proj"
    (top / ".git").mkdir(parents=True)
    (top / "sub").mkdir()
    monkeypatch.setenv("PATH", str(fake_bin))
    started = time.monotonic()
    root = ident.find_repo_root(top / "sub")
    elapsed = time.monotonic() - started
    assert root == top
    assert elapsed < ident.GIT_TIMEOUT_S + 1.5


def test_git_env_of_another_repository_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = make_repo(tmp_path / "a")
    b = make_repo(tmp_path / "b")
    monkeypatch.setenv("GIT_DIR", str(b / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(b))
    assert ident.find_repo_root(a / "src") == a


def test_root_is_memoised_per_cwd(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "m")
    cwd = repo / "src"
    assert ident.find_repo_root(cwd) == repo
    shutil.rmtree(repo / ".git")
    assert ident.find_repo_root(cwd) == repo  # computed once per cwd per process
    ident.clear_repo_root_cache()
    assert ident.find_repo_root(cwd) == cwd


def test_repo_key_is_slug_and_hash_of_the_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "My_Cool.Repo")
    root = ident.find_repo_root(repo / "src")
    expected_hash = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    assert ident.repo_key(root) == f"my-cool-repo-{expected_hash}"
