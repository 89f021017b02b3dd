"""docs/editors.md's Neovim 0.7-0.9 setup, run as written in the Neovim that Debian 12 ships (0.7)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, require_tool

PAGE = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
GHOST = """\
apiVersion: v1
kind: Pod
metadata: {name: ghost}
spec:
  nodeName: kind-wroker
  containers: [{name: shell, image: busybox}]
"""
# After the setup: wait for the server's diagnostics on the opened file, write them down, send the
# refresh command through the user command the page defines, quit.
PROBE = """
vim.api.nvim_create_autocmd("VimEnter", { callback = function()
  vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 100)
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(lines, string.format("%d:%d %s", d.lnum + 1, d.col + 1, d.message))
  end
  vim.cmd("NodenameLintRefresh")
  vim.fn.writefile(lines, vim.env.DIAGNOSTICS)
  vim.cmd("qall!")
end })
"""


def test_the_neovim_07_setup_shows_diagnostics_with_the_cluster_state(tmp_path: Path) -> None:
    """Issue 23: the guide's config needed Neovim 0.10 (vim.fs.root, vim.lsp.start); distributions ship 0.7."""
    nvim = require_tool("nvim", "apt-get install neovim (Debian 12: 0.7.2)")
    version = subprocess.run([nvim, "--version"], capture_output=True, text=True, check=True).stdout.split()[1]
    block = re.search(r"<!-- nvim-0.7:start[^\n]*\n```lua\n(.*?)```\n<!-- nvim-0.7:end -->", PAGE, re.S)
    assert block is not None
    project = tmp_path / "project"
    (project / "cluster").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "cluster" / "state.yaml").write_text(
        (ROOT / "examples" / "cluster" / "state.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (project / "deploy").mkdir()
    (project / "deploy" / "ghost.yaml").write_text(GHOST, encoding="utf-8")
    init = tmp_path / "init.lua"
    init.write_text(block.group(1) + PROBE, encoding="utf-8")
    found = tmp_path / "diagnostics.txt"
    env = {
        **os.environ,
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
        "DIAGNOSTICS": str(found),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    completed = subprocess.run(
        [nvim, "--headless", "-u", str(init), "deploy/ghost.yaml"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert found.exists(), f"Neovim {version}: {completed.stdout}{completed.stderr}"
    diagnostics = found.read_text(encoding="utf-8")
    # unknown-node is a cluster rule: the state named in the settings, relative to the project root, was read
    assert "5:3 node kind-wroker does not exist in the cluster" in diagnostics, (version, diagnostics, completed.stderr)
    assert "Error" not in completed.stderr, completed.stderr
