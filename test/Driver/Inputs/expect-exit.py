"""Runs a command and fails unless it exits with the expected status.

Usage: expect-exit.py STATUS COMMAND [ARGS...]
The command's stdout and stderr are passed through (stderr to stderr) so that
FileCheck can read them. lit's shell has no `$?`, hence this helper.
"""
import subprocess
import sys

expected = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:], capture_output=True, text=True)
sys.stdout.write(proc.stdout)
sys.stderr.write(proc.stderr)
if proc.returncode != expected:
    sys.stderr.write(f"expect-exit: exit status {proc.returncode}, expected {expected}\n")
    sys.exit(1)
