#!/usr/bin/env python3
"""Checks ksim's module graph (docs/DESIGN.md, "Modules") against the code.

A module is a folder of core/, sim/ or viz/ whose CMakeLists.txt calls ksim_module(PUBLIC ...
PRIVATE ...) (cmake/KsimModule.cmake). This script checks that:
  - every quoted #include of a module's files names a header of a module (or of the module
    itself), and no module folder lies inside another (an include root would expose both);
  - PUBLIC lists exactly the modules the module's headers include, PRIVATE exactly those that
    only its .cc files include;
  - the layers point down: core/ modules use only core/, sim/ modules only core/ and sim/;
  - the graph has no cycle;
  - the picture in docs/DESIGN.md, between <!-- modules:begin --> and <!-- modules:end -->, is
    the one this script draws from the graph (--write redraws it).
The build enforces the declared graph (a header of an unlinked module is not found); this test
keeps the declarations honest and the picture true.

  scripts/check_modules.py [--root DIR]           check; exit 1 with every problem found
  scripts/check_modules.py [--root DIR] --write   redraw the picture in docs/DESIGN.md
"""
import argparse
import os
import re
import sys

LAYERS = ("core", "sim", "viz")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
BEGIN = "<!-- modules:begin -->"
END = "<!-- modules:end -->"


def find_modules(root):
    """{folder: (public set, private set)} from every ksim_module() call."""
    modules = {}
    for layer in LAYERS:
        for directory, _, files in os.walk(os.path.join(root, layer)):
            if "CMakeLists.txt" not in files:
                continue
            text = open(os.path.join(directory, "CMakeLists.txt"), encoding="utf-8").read()
            text = re.sub(r"#.*", "", text)
            call = re.search(r"ksim_module\(([^)]*)\)", text)
            if not call:
                continue
            lists = {"PUBLIC": set(), "PRIVATE": set()}
            current = None
            for word in call.group(1).split():
                if word in ("PUBLIC", "PRIVATE", "LIBS_PUBLIC", "LIBS_PRIVATE"):
                    current = word
                elif current in lists:
                    lists[current].add(word)
            folder = os.path.relpath(directory, root)
            modules[folder] = (lists["PUBLIC"], lists["PRIVATE"])
    return modules


def includes_of(root, folder):
    """(modules the headers include, modules the .cc files include, problems)."""
    from_headers, from_sources, problems = set(), set(), []
    directory = os.path.join(root, folder)
    for name in sorted(os.listdir(directory)):
        if not name.endswith((".h", ".cc")):
            continue
        text = open(os.path.join(directory, name), encoding="utf-8").read()
        for included in INCLUDE.findall(text):
            target = os.path.dirname(included)
            if target == folder:
                continue
            (from_headers if name.endswith(".h") else from_sources).add((target, name, included))
    return from_headers, from_sources, problems


def layer_of(folder):
    return folder.split("/")[0]


def find_cycle(graph):
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == "open":
                return stack[stack.index(successor):] + [successor]
            if successor not in state:
                cycle = visit(successor)
                if cycle:
                    return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def transitive_reduction(graph):
    """The edges not implied by a longer path (graph is a DAG)."""
    def reachable(start, skip_edge):
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            for successor in graph.get(node, ()):
                if (node, successor) == skip_edge or successor in seen:
                    continue
                seen.add(successor)
                todo.append(successor)
        return seen

    kept = {}
    for node in graph:
        kept[node] = {s for s in graph[node] if s not in reachable(node, (node, s))}
    return kept


def node_id(folder):
    return folder.replace("/", "_")


def picture(graph):
    """A Mermaid flowchart of the reduced graph, one subgraph per layer."""
    reduced = transitive_reduction(graph)
    lines = [BEGIN, "```mermaid", "flowchart TD"]
    for layer in reversed(LAYERS):
        members = sorted(f for f in graph if layer_of(f) == layer)
        if not members:
            continue
        lines.append(f"  subgraph {layer}")
        for folder in members:
            lines.append(f'    {node_id(folder)}["{folder.split("/", 1)[1]}"]')
        lines.append("  end")
    for folder in sorted(reduced):
        for dependency in sorted(reduced[folder]):
            lines.append(f"  {node_id(folder)} --> {node_id(dependency)}")
    lines += ["```", END]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--write", action="store_true", help="redraw docs/DESIGN.md's picture")
    args = parser.parse_args()
    root = os.path.abspath(args.root)

    modules = find_modules(root)
    problems = []
    if not modules:
        problems.append(f"no ksim_module() found under {root}")
    for outer in modules:
        for inner in modules:
            if inner != outer and inner.startswith(outer + "/"):
                problems.append(f"module {inner} lies inside module {outer}")

    graph = {}
    for folder, (public, private) in sorted(modules.items()):
        for declared in sorted(public | private):
            if declared not in modules:
                problems.append(f"{folder}/CMakeLists.txt names {declared}, which is not a module")
        both = public & private
        if both:
            problems.append(f"{folder}/CMakeLists.txt lists {', '.join(sorted(both))} as both "
                            "PUBLIC and PRIVATE")
        from_headers, from_sources, _ = includes_of(root, folder)
        used_public, used_private = set(), set()
        for target, name, included in sorted(from_headers | from_sources):
            if target not in modules:
                problems.append(f"{folder}/{name} includes \"{included}\": {target} is not a "
                                "module")
                continue
            if layer_of(folder) == "core" and layer_of(target) != "core":
                problems.append(f"{folder}/{name} includes \"{included}\": core/ knows nothing "
                                f"of {layer_of(target)}/")
            if layer_of(folder) == "sim" and layer_of(target) == "viz":
                problems.append(f"{folder}/{name} includes \"{included}\": sim/ knows nothing "
                                "of viz/")
            (used_public if name.endswith(".h") else used_private).add(target)
        used_private -= used_public
        for missing in sorted(used_public - public):
            problems.append(f"{folder}: its headers include {missing}; add it to PUBLIC in "
                            f"{folder}/CMakeLists.txt")
        for missing in sorted(used_private - private - public):
            problems.append(f"{folder}: its .cc files include {missing}; add it to PRIVATE in "
                            f"{folder}/CMakeLists.txt")
        for extra in sorted(public - used_public):
            where = "PRIVATE" if extra in used_private else "nothing"
            problems.append(f"{folder}/CMakeLists.txt lists {extra} as PUBLIC but no header "
                            f"includes it (it should be {where})")
        for extra in sorted(private - used_private):
            problems.append(f"{folder}/CMakeLists.txt lists {extra} as PRIVATE but no .cc file "
                            "includes it")
        graph[folder] = public | private

    cycle = find_cycle({f: {d for d in deps if d in modules} for f, deps in graph.items()})
    if cycle:
        problems.append("the module graph has a cycle: " + " -> ".join(cycle))

    design_path = os.path.join(root, "docs", "DESIGN.md")
    design = open(design_path, encoding="utf-8").read()
    if not cycle and not problems:
        drawn = picture(graph)
        block = re.search(re.escape(BEGIN) + ".*?" + re.escape(END), design, re.S)
        if args.write:
            if not block:
                problems.append(f"{design_path} has no {BEGIN} ... {END} block to redraw")
            else:
                design = design[:block.start()] + drawn + design[block.end():]
                open(design_path, "w", encoding="utf-8").write(design)
        elif not block:
            problems.append(f"{design_path} has no {BEGIN} ... {END} block")
        elif block.group(0) != drawn:
            problems.append(f"the module picture in {design_path} is not the graph's: run "
                            "scripts/check_modules.py --write")

    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    edges = sum(len(deps) for deps in graph.values())
    print(f"{len(modules)} modules, {edges} dependencies, no cycle; the picture is the graph's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
