# lit configuration for dlc: IR tests (dlc-opt + FileCheck) and driver tests.
import os
import shutil
import subprocess

import lit.formats

config.name = "dlc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "runtime-only", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dlc_obj_root, "test")

# dlc's tools first, then FileCheck and not from the LLVM 19 installation.
config.environment["PATH"] = os.pathsep.join(
    [config.dlc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])]
)
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%dlc_src", config.dlc_src_root))
# Models written by real Keras at test time (test/e2e/gen_fixtures.py).
config.substitutions.append(("%fixtures", config.dlc_fixtures))
# The `dyn` fixture set (test/e2e/fixture_dyn.py): inputs with None dims.
config.substitutions.append(("%dyn_fixtures", config.dlc_fixtures + "-dyn"))
# The `attn` fixture set (test/e2e/fixture_attn.py): attention layers.
config.substitutions.append(("%attn_fixtures", config.dlc_fixtures + "-attn"))
# The `quant` set's (test/e2e/fixture_quant.py): Keras-quantized models.
config.substitutions.append(("%quant_fixtures", config.dlc_fixtures + "-quant"))
config.substitutions.append(("%venv_python", os.path.join(config.dlc_src_root, ".venv", "bin", "python")))

# The `cuda` feature: only where a GPU answers.
def _have_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        return subprocess.run([smi, "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False

if _have_gpu():
    config.available_features.add("cuda")
