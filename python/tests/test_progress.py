"""Progress of long compilations (kernels compiled / all), on a terminal only."""

import os
import pty
import subprocess

import dlc


def run_in_pty(cmd):
    """Runs `cmd` with stderr (and stdout) on a pseudo-terminal; returns what it wrote."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert p.wait() == 0, out
    return out.decode(errors="replace")


def test_cli_progress_on_a_terminal_only(fixture, dlc_cli, tmp_path):
    f = fixture("mnist_cnn")
    out = tmp_path / "m.dlcm"
    text = run_in_pty([dlc_cli, "compile", f.keras_file, "-o", str(out)])
    assert "dlc: compiling kernels 1/7" in text and "dlc: compiling kernels 7/7\r\n" in text
    p = subprocess.run([dlc_cli, "compile", f.keras_file, "-o", str(out)], capture_output=True,
                       text=True)
    assert p.returncode == 0 and p.stderr == ""


def test_python_progress(fixture, capfd):
    f = fixture("mnist_cnn")
    model = dlc.compile(f.keras_file, progress=True)
    model.artifact()
    assert "dlc: compiling kernels 7/7\n" in capfd.readouterr().err
    # None: stderr is not a terminal under pytest, so nothing.
    dlc.compile(f.keras_file).artifact()
    assert capfd.readouterr().err == ""
