#!/usr/bin/env python3
"""Every shader in shaders/ compiles in both GLSL dialects the app gives it: GLSL 3.30 core (the
desktop's OpenGL 3.3) and GLSL ES 3.00 (the browser's WebGL 2, issue 27), each with the header
app/platform/gl.hpp puts before it (kGlslHeader, kGlslEsHeader). glslangValidator (Debian's
glslang-tools) compiles them; a shader that starts with its own #version line is refused, as the
header gives it.

Run: /usr/bin/python3 tests/tools/check_shaders.py SOURCE_DIR
Prints one line per shader and dialect; exits non-zero on any failure."""

import pathlib
import re
import shutil
import subprocess
import sys
import tempfile


def headers(root):
    """The two headers as app/platform/gl.hpp spells them (its string literals, unescaped)."""
    text = (root / "app/platform/gl.hpp").read_text(encoding="utf-8")
    found = {}
    for name in ("kGlslHeader", "kGlslEsHeader"):
        match = re.search(name + r'\s*=\s*((?:\s*"[^"]*")+);', text)
        if not match:
            sys.exit(f"check_shaders: {name} not found in app/platform/gl.hpp")
        found[name] = "".join(re.findall(r'"([^"]*)"', match.group(1))).encode().decode(
            "unicode_escape")
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    validator = shutil.which("glslangValidator")
    if not validator:
        sys.exit("check_shaders: glslangValidator not found: run third_party/install-deps.sh test")
    shaders = sorted(p for p in (root / "shaders").iterdir() if p.suffix in (".vert", ".frag"))
    if not shaders:
        sys.exit("check_shaders: no shaders in shaders/")
    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        for shader in shaders:
            source = shader.read_text(encoding="utf-8")
            if source.lstrip().startswith("#version"):
                print(f"FAIL {shader.name}: starts with #version; the platform's header gives it")
                failures += 1
                continue
            for name, header in headers(root).items():
                path = pathlib.Path(folder) / shader.name  # the suffix names the stage
                path.write_text(header + source, encoding="utf-8")
                run = subprocess.run([validator, str(path)], capture_output=True, text=True)
                ok = run.returncode == 0
                failures += 0 if ok else 1
                print(f"{'ok  ' if ok else 'FAIL'} {shader.name} with {name}")
                if not ok:
                    print(run.stdout + run.stderr)
    print(f"check_shaders: {len(shaders)} shaders, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
