"""Special files for the tests of what dlc reads and writes.

Usage:
  special-files.py chardev PATH
      Makes PATH a character device that discards what is written to it: a
      copy of /dev/null's node when the test runs as root (so that a
      regression that replaces the output never touches the real /dev/null),
      else a symbolic link to /dev/null (which an unprivileged regression
      could not replace).
  special-files.py through-fifo FIFO COPY STATUS COMMAND [ARGS...]
      Makes FIFO, runs COMMAND while a reader copies what comes through FIFO
      into COPY, and fails unless COMMAND exits with STATUS within 60 seconds
      and FIFO is still a FIFO afterwards.
"""
import os
import stat
import subprocess
import sys
import threading


def chardev(path):
    if os.geteuid() == 0:
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            return
        except OSError:
            pass
    os.symlink("/dev/null", path)


def through_fifo(fifo, copy, status, command):
    os.mkfifo(fifo)
    done = threading.Event()

    def read():
        with open(fifo, "rb") as src, open(copy, "wb") as dst:
            dst.write(src.read())
        done.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        sys.exit("through-fifo: the command did not finish within 60 seconds")
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if not done.wait(10):
        # The command never opened the FIFO: release the reader.
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
    if not stat.S_ISFIFO(os.lstat(fifo).st_mode):
        sys.exit(f"through-fifo: {fifo} is no longer a FIFO")
    if proc.returncode != status:
        sys.exit(f"through-fifo: exit status {proc.returncode}, expected {status}")


if __name__ == "__main__":
    if sys.argv[1] == "chardev":
        chardev(sys.argv[2])
    elif sys.argv[1] == "through-fifo":
        through_fifo(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:])
    else:
        sys.exit(f"special-files.py: unknown action {sys.argv[1]}")
