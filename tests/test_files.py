"""Files written whole or not at all, and paths checked before a run."""

import errno
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import treebo
from treebo.files import WriteError, check_directory, check_output_file, write_atomically


def _names(folder):
    return sorted(p.name for p in folder.iterdir())


def test_write_atomically_writes_bytes_text_and_a_writer(tmp_path):
    assert write_atomically(tmp_path / "a", b"\x00bytes") == tmp_path / "a"
    write_atomically(tmp_path / "b", "été\n")
    write_atomically(tmp_path / "c", "été", encoding="latin-1")
    write_atomically(tmp_path / "d", lambda handle: handle.write(b"from a writer"))
    assert (tmp_path / "a").read_bytes() == b"\x00bytes"
    assert (tmp_path / "b").read_bytes() == "été\n".encode()
    assert (tmp_path / "c").read_bytes() == b"\xe9t\xe9"
    assert (tmp_path / "d").read_bytes() == b"from a writer"
    assert _names(tmp_path) == ["a", "b", "c", "d"]


def test_a_new_file_gets_the_umask_mode_and_a_replaced_file_keeps_its_mode(tmp_path):
    previous = os.umask(0o027)
    try:
        write_atomically(tmp_path / "new", b"x")
    finally:
        os.umask(previous)
    # 0o666 less the umask, as open() gives (a temporary from mkstemp would be 0o600).
    assert (tmp_path / "new").stat().st_mode & 0o7777 == 0o640
    kept = tmp_path / "kept"
    kept.write_bytes(b"old")
    kept.chmod(0o604)
    write_atomically(kept, b"new")
    assert kept.read_bytes() == b"new" and kept.stat().st_mode & 0o7777 == 0o604


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_replaced_file_keeps_its_owner(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.write_bytes(b"old")
    os.chown(theirs, 65534, 65534)
    write_atomically(theirs, b"new")
    assert theirs.read_bytes() == b"new"
    assert (theirs.stat().st_uid, theirs.stat().st_gid) == (65534, 65534)


def test_a_symbolic_link_is_followed_and_kept(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "report.html"
    target.write_text("old")
    link = tmp_path / "report.html"
    link.symlink_to(target)
    write_atomically(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert _names(tmp_path / "real") == ["report.html"]


def test_a_failed_writer_leaves_the_previous_file_and_no_temporary(tmp_path):
    target = tmp_path / "figure.png"
    target.write_bytes(b"the good figure")

    def broken(handle):
        handle.write(b"half a figure")
        raise RuntimeError("the figure cannot be drawn")

    with pytest.raises(RuntimeError, match="cannot be drawn"):  # raised as it is
        write_atomically(target, broken)
    assert target.read_bytes() == b"the good figure"
    assert _names(tmp_path) == ["figure.png"]


def test_a_directory_is_not_replaced(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "inside").write_text("kept")
    with pytest.raises(WriteError) as caught:
        write_atomically(folder, b"x")
    assert caught.value.errno == errno.EISDIR and isinstance(caught.value, OSError)
    assert str(caught.value) == f"cannot write {folder}: Is a directory"
    assert _names(tmp_path) == ["out"] and (folder / "inside").read_text() == "kept"


@pytest.mark.fault
def test_a_write_past_a_file_size_limit_leaves_the_previous_file(tmp_path):
    (tmp_path / "data").write_bytes(b"previous")

    def limited():
        import resource

        # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG.
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from treebo.files import write_atomically; write_atomically('data', b'x' * 10000)",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(treebo.__file__).parents[1])},
        preexec_fn=limited,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (tmp_path / "data").read_bytes() == b"previous"
    assert _names(tmp_path) == ["data"]
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "treebo.files.WriteError: cannot write data: File too large"
    )


# -- checking paths before a run ----------------------------------------------------------------
def test_check_output_file(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert check_output_file(tmp_path / "file", "--output") == tmp_path / "file"
    assert check_output_file(tmp_path / "new" / "deeper" / "r.html", "-o") is not None
    cases = {
        tmp_path / "folder": "is a directory, not a file",
        tmp_path / "file" / "r.html": f"{tmp_path / 'file'} is a file, not a directory",
        tmp_path / "dangling" / "r.html": f"{tmp_path / 'dangling'} is a symbolic link to nothing",
    }
    for path, cause in cases.items():
        with pytest.raises(ValueError, match=f"^{re.escape(f'--output {path}: {cause}')}$"):
            check_output_file(path, "--output")


def test_check_directory(tmp_path):
    (tmp_path / "file").write_text("x")
    os.mkfifo(tmp_path / "fifo")
    assert check_directory(tmp_path, "--out") == tmp_path
    assert check_directory(tmp_path / "to" / "be" / "made", "--out") is not None
    cases = {
        tmp_path / "file": "is a file, not a directory",
        tmp_path / "fifo": "is not a directory",
        tmp_path / "file" / "sub": f"{tmp_path / 'file'} is a file, not a directory",
    }
    for path, cause in cases.items():
        with pytest.raises(ValueError, match=f"^{re.escape(f'--out {path}: {cause}')}$"):
            check_directory(path, "--out")
    assert _names(tmp_path) == ["fifo", "file"]  # nothing made


@pytest.mark.fault
def test_a_folder_or_file_this_user_cannot_write_is_refused(user_dir, unprivileged_prefix):
    locked = user_dir / "locked"
    locked.mkdir(mode=0o555)
    os.chown(locked, user_dir.stat().st_uid, user_dir.stat().st_gid)
    # A file made read-only by its owner, in a folder the user can write in: a rename
    # alone could replace it, but a write into it would be refused, and so is this one.
    kept = user_dir / "kept.html"
    kept.write_text("kept")
    os.chown(kept, user_dir.stat().st_uid, user_dir.stat().st_gid)
    kept.chmod(0o444)
    code = (
        "from treebo.files import check_directory, check_output_file, write_atomically\n"
        "for check, path in ((check_directory, 'locked/ck'), (check_output_file, 'locked/r')):\n"
        "    try:\n"
        "        check(path, '--x')\n"
        "    except ValueError as error:\n"
        "        print(error)\n"
        "try:\n"
        "    write_atomically('kept.html', 'new')\n"
        "except OSError as error:\n"
        "    print(error)\n"
    )
    proc = subprocess.run(
        [*unprivileged_prefix, sys.executable, "-c", code],
        cwd=user_dir,
        env={**os.environ, "PYTHONPATH": str(Path(treebo.__file__).parents[1])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout.splitlines() == [
        "--x locked/ck: locked is not writable by this user",
        "--x locked/r: locked is not writable by this user",
        "cannot write kept.html: Permission denied",
    ], proc.stderr
    assert kept.read_text() == "kept"
    assert _names(user_dir) == ["kept.html", "locked"]


@pytest.mark.fault
def test_bench_refuses_an_out_that_is_a_file_before_any_run(tmp_path, capsys):
    from treebo.cli import main

    out = tmp_path / "results"
    out.write_text("not a folder\n")
    argv = ["bench", "--problems", "branin", "--surrogates", "rf", "--seeds", "0"]
    assert main([*argv, "--n-calls", "7", "--out", str(out), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"treebo bench: error: --out {out}: is a file, not a directory\n"
    assert captured.out == "" and out.read_text() == "not a folder\n"
