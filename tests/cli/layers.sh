#!/usr/bin/env bash
# The library's layers hold in the source, where the build cannot see them:
#   (a) each public header (lib/include/dmlbits) includes only public headers, and the public
#       headers form the same layers as lib/src: no file includes a public header of a layer
#       above its own (the build already refuses a private header of a layer above, which is not
#       on that layer's include path)
#   (b) app/ includes only public headers (and its own)
#   (d) the umbrella dmlbits/dmlbits.hpp includes every public header of the operation API, that
#       is all but dmlbits/front_end.hpp, and none of them includes front_end.hpp
#   (c) operating-system headers and calls are made only in lib/src/platform: no <unistd.h>,
#       <fcntl.h>, <signal.h>, <dlfcn.h>, <pthread.h>, <sys/...> or <windows.h> elsewhere, and no
#       getenv/setenv/unsetenv/putenv outside it
#   (e) each private header a layer includes is its own or a layer's below it, in the order
#       below: so the backends (cpu, d3d12, directml) are siblings, none including another's
#       headers, but directml, which runs DirectML on a D3D12 device, including d3d12's. The
#       build refuses only what a layer does not link, and a DEPS list may grow.
# Each finding names the file and the line.
source "$(dirname "$0")/lib.sh" || exit 1

/usr/bin/python3 - "$DMLBITS_SOURCE_DIR" > "$WORK/findings" <<'EOF'
import pathlib, re, sys

root = pathlib.Path(sys.argv[1])
# Each layer and the layers right below it; a layer may use every layer below it, down to core.
# The backends (cpu, d3d12, directml) are siblings over machine: none is below another but
# directml, which runs on d3d12.
right_below = {
    "core": [],
    "platform": ["core"],
    "io": ["platform"],
    "expr": ["core"],
    "ops": ["io", "expr"],
    "machine": ["platform"],
    "cpu": ["machine", "ops"],
    "dxbc": ["core"],
    "shaders": ["dxbc"],
    "d3d12": ["shaders", "machine", "ops"],
    "directml": ["d3d12"],
    "run": ["cpu", "directml"],
    "golden": ["run"],
}
below = {}
for layer in right_below:  # each layer after those right below it
    below[layer] = set(right_below[layer]).union(*(below[l] for l in right_below[layer]))
# The layer of each public header. front_end.hpp includes no other header, so that the layers
# that implement its parts (core, platform, io) may each include it; the umbrella is the top.
public = {
    "core": "error dtype ops timing front_end",
    "io": "tensor",
    "cpu": "elements",
    "run": "options request plan devices",
    "golden": "check dmlbits",
}
owner = {f"{h}.hpp": layer for layer, names in public.items() for h in names.split()}
include_dir = root / "lib/include/dmlbits"
findings = []
for h in sorted(include_dir.glob("*.hpp")):
    if h.name not in owner:
        findings.append(f"{h.relative_to(root)}: a public header with no layer in tests/cli/layers.sh")

def layer_of(path):
    rel = path.relative_to(root)
    if rel.parts[:2] == ("lib", "src"):
        return rel.parts[2]
    if rel.parts[0] == "shaders":
        return "shaders"
    if rel.parts[:2] == ("lib", "include"):
        return owner.get(path.name)
    return None

# (e) The layer of each private header, by its name: layers include each other's headers by bare
# name (each layer's folder is on the include path of those above it).
private = {}
for path in sorted((root / "lib/src").glob("*/*.hpp")) + sorted((root / "shaders").glob("*.hpp")):
    private.setdefault(path.name, set()).add(layer_of(path))
backends = {"cpu", "d3d12", "directml"}

include_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
os_headers = re.compile(r"^(unistd\.h|fcntl\.h|signal\.h|csignal|dlfcn\.h|pthread\.h|sys/.*|windows\.h|io\.h)$")
env_call = re.compile(r"\b(getenv|setenv|unsetenv|putenv|_putenv|_wgetenv)\s*\(")
sources = [p for d in ("lib", "app", "shaders") for p in (root / d).rglob("*") if p.suffix in (".cpp", ".hpp")]
for path in sorted(sources):
    rel = path.relative_to(root)
    layer = layer_of(path)
    in_platform = rel.parts[:3] == ("lib", "src", "platform")
    for n, line in enumerate(path.read_text().splitlines(), 1):
        where = f"{rel}:{n}"
        m = include_re.match(line)
        if m:
            kind, name = m.groups()
            if kind == "<" and os_headers.match(name) and not in_platform:
                findings.append(f"{where}: <{name}> outside lib/src/platform")
            if kind == '"':
                if rel.parts[:2] == ("lib", "include") and not name.startswith("dmlbits/"):
                    findings.append(f'{where}: public header includes private "{name}"')
                if rel.parts[0] == "app" and not name.startswith("dmlbits/") and not (path.parent / name).exists():
                    findings.append(f'{where}: app/ includes private "{name}"')
                if layer is not None and not (path.parent / name).exists() and name in private:
                    for used in sorted(private[name] - {layer} - below.get(layer, set())):
                        what = "another backend's" if {layer, used} <= backends else "a header of a layer above it:"
                        findings.append(f"{where}: layer {layer} includes {what} {name} (layer {used})")
                if name.startswith("dmlbits/") and layer is not None:
                    used = owner.get(name.removeprefix("dmlbits/"))
                    if used is not None and used != layer and used not in below.get(layer, set()):
                        findings.append(f"{where}: layer {layer} includes {name} of layer {used}, above it")
        code = line.split("//", 1)[0]
        if env_call.search(code) and not in_platform:
            findings.append(f"{where}: environment access outside lib/src/platform")
# (d) The umbrella and the front ends' header.
umbrella = include_dir / "dmlbits.hpp"
included = {m.group(2) for line in umbrella.read_text().splitlines() if (m := include_re.match(line))}
for h in sorted(include_dir.glob("*.hpp")):
    name = f"dmlbits/{h.name}"
    if h.name in ("dmlbits.hpp", "front_end.hpp"):
        if name in included and h.name == "front_end.hpp":
            findings.append(f"{umbrella.relative_to(root)}: includes {name}, which is not the operation API")
        continue
    if name not in included:
        findings.append(f"{umbrella.relative_to(root)}: does not include {name}")
    if any((m := include_re.match(line)) and m.group(2) == "dmlbits/front_end.hpp" for line in h.read_text().splitlines()):
        findings.append(f"{h.relative_to(root)}: the operation API includes dmlbits/front_end.hpp")
if findings:
    print("\n".join(findings))
EOF
checks=$((checks + 1))
if [ -s "$WORK/findings" ]; then
  while IFS= read -r f; do fail "$f"; done < "$WORK/findings"
fi
finish
