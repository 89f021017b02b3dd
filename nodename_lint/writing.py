"""Report and snapshot files written without following a symlink of a repository.

A report is often written into the checkout (`--output-sarif nodename-lint.sarif`, the Action's
`sarif-file`), and a pull request can put a symlink there: `nodename-lint.sarif -> ~/.bashrc`
would make the run overwrite any file the runner's user can write. So the path is opened one
folder at a time from `/`, each with O_NOFOLLOW, and a symlink that lies in a repository (a folder
inside a git work tree, or inside the current folder) is refused, wherever it points: nothing can
swap one in between the check and the write either. A link elsewhere on the machine was made by
the user, not by a pull request, and the rest of the path is opened as given (`/dev/stdout`).
"""

from __future__ import annotations

import contextlib
import os
import stat

from .sources import UsageError, repository_root

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
# O_NONBLOCK: a FIFO with no reader is an error at once, not a run blocked for ever
_REPOSITORY_FILE_FLAGS = _WRITE_FLAGS | os.O_NOFOLLOW | os.O_NONBLOCK


def write_output(path: str, text: str, what: str) -> None:
    """Write TEXT to the file PATH (WHAT it is, e.g. "sarif report", for messages); UsageError when it cannot be."""
    try:
        descriptor = _open_output(path, what)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the {what}: {exc.strerror or exc}") from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)


def check_output(path: str, what: str) -> None:
    """Refuse, before a run, an output PATH that a symlink of a repository leads through (write_output
    checks again as it writes); a folder that does not exist is left for the write to report."""
    try:
        folder, _ = _open_folder(path, what)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the {what}: {exc.strerror or exc}") from None
    if folder is not None:
        try:
            _no_link(os.path.basename(os.path.abspath(path)), folder, path, what)
        finally:
            os.close(folder)


def make_parent_folders(path: str) -> None:
    """Create the folders above PATH that are missing (`mkdir -p`), never through a symlink of a repository."""
    folder, _ = _open_folder(path, "folder", create=True)
    if folder is not None:
        os.close(folder)


def _open_output(path: str, what: str) -> int:
    folder, rest = _open_folder(path, what)
    if folder is None:  # a link outside every repository: the user's own path
        return os.open(rest, _WRITE_FLAGS, 0o666)
    try:
        _no_link(rest, folder, path, what)
        descriptor = os.open(rest, _REPOSITORY_FILE_FLAGS, 0o666, dir_fd=folder)
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise UsageError(f"{path}: the {what} is not written: it is not a regular file")
    os.set_blocking(descriptor, True)
    return descriptor


def _open_folder(path: str, what: str, create: bool = False) -> tuple[int | None, str]:
    """(descriptor of PATH's folder, PATH's last name), the folders opened from `/` one by one without
    following a link; (None, the rest of the path) at a link outside every repository."""
    absolute = os.path.abspath(path)
    parts = [part for part in absolute.split(os.sep) if part]
    descriptor = os.open(os.sep, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    real = os.sep
    for index, part in enumerate(parts[:-1]):
        try:
            if _is_link(part, descriptor):
                if _in_repository(real):
                    _no_link(part, descriptor, path, what)
                return None, os.path.join(real, *parts[index:])
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=descriptor)
            inner = os.open(part, _FOLDER_FLAGS, dir_fd=descriptor)
        except BaseException:
            os.close(descriptor)
            raise
        os.close(descriptor)
        descriptor, real = inner, os.path.join(real, part)
    name = parts[-1] if parts else os.curdir
    if _is_link(name, descriptor) and not _in_repository(real):
        os.close(descriptor)
        return None, os.path.join(real, name)
    return descriptor, name


def _is_link(name: str, folder: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False


def _in_repository(real_folder: str) -> bool:
    """Whether a folder (a real path) lies in a git work tree or the current folder: its links may be a PR's."""
    if os.path.exists(os.path.join(repository_root(real_folder), ".git")):
        return True
    here = os.path.realpath(os.getcwd())
    return real_folder == here or real_folder.startswith(here.rstrip(os.sep) + os.sep)


def _no_link(name: str, folder: int, path: str, what: str) -> None:
    """UsageError when NAME in FOLDER is a symlink (O_NOFOLLOW alone would say "too many levels of links")."""
    if _is_link(name, folder):
        raise UsageError(
            f"{path}: the {what} is not written: {name} is a symlink inside a repository, and nodename-lint never "
            "writes through one (a pull request could point it at any file the runner can write); remove the "
            "link, or write the report outside the checkout"
        )
