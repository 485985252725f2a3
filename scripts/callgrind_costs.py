#!/usr/bin/env python3
"""Two views of a callgrind profile that callgrind_annotate does not give, used to find the
constant costs of issue 15's runs (docs/BENCHMARKS.md, "Scale", twentieth change):

  per-call  functions by inclusive cost, with their calls and the cost of one call: a function
            that costs far more per call than its work needs (a JSON tree built to read three
            numbers) stands out even when no single line of it does.
  into LIB  the inclusive cost of every call from code outside LIB into a function whose name
            holds LIB, summed by the caller: who pays for a library (nlohmann, _Hash_bytes).

  valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out build/tools/ksim run S.json
  scripts/callgrind_costs.py per-call /tmp/cg.out --min-per-call 1500 --top 60
  scripts/callgrind_costs.py into nlohmann /tmp/cg.out --top 25

Reads the output file's call records (`calls=` lines and the cost line after each); a
recursive call is not counted into its own function. Standard library only.
"""
import argparse
import collections
import re
import sys


def read_calls(path):
    """(callee inclusive cost, callee calls, caller->callee cost) from the call records."""
    names = {}
    inclusive = collections.Counter()
    calls = collections.Counter()
    edges = collections.Counter()
    fn = cfn = None
    pending_calls = None
    with open(path, errors='replace') as profile:
        for line in profile:
            if line.startswith(('fn=', 'cfn=')):
                key, rest = line.rstrip('\n').split('=', 1)
                match = re.match(r'\((\d+)\)(?: (.*))?', rest)
                if not match:
                    continue
                if match.group(2):
                    names[match.group(1)] = match.group(2)
                if key == 'fn':
                    fn = match.group(1)
                else:
                    cfn = match.group(1)
            elif line.startswith('calls='):
                pending_calls = int(line[len('calls='):].split()[0])
            elif pending_calls is not None:
                fields = line.split()
                if len(fields) >= 2 and fn != cfn:
                    cost = int(fields[1])
                    inclusive[cfn] += cost
                    calls[cfn] += pending_calls
                    edges[(fn, cfn)] += cost
                pending_calls = None
    return names, inclusive, calls, edges


def short(name, width=150):
    name = name.replace('std::__cxx11::basic_string<char, std::char_traits<char>, '
                        'std::allocator<char> >', 'string')
    return name[:width]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = parser.add_subparsers(dest='view', required=True)
    per_call = sub.add_parser('per-call', help='functions by inclusive cost, per call')
    per_call.add_argument('profile')
    per_call.add_argument('--min-per-call', type=float, default=1000)
    per_call.add_argument('--min-total', type=float, default=5e6)
    per_call.add_argument('--min-calls', type=int, default=50)  # not main and its frames
    per_call.add_argument('--top', type=int, default=60)
    into = sub.add_parser('into', help='cost of calls into a library, by caller')
    into.add_argument('library')
    into.add_argument('profile')
    into.add_argument('--top', type=int, default=25)
    args = parser.parse_args()

    names, inclusive, calls, edges = read_calls(args.profile)
    if args.view == 'per-call':
        rows = []
        for key, cost in inclusive.items():
            name = names.get(key, '?')
            if 'std::_Function_handler' in name or name.startswith('_ZNSt17_Function_handler'):
                continue  # the wrapper costs what its target does
            if (cost >= args.min_total and calls[key] >= args.min_calls and
                    cost / calls[key] >= args.min_per_call):
                rows.append((cost, calls[key], name))
        rows.sort(reverse=True)
        print(f'{"inclusive":>10} {"calls":>9} {"per call":>9}  function')
        for cost, count, name in rows[:args.top]:
            print(f'{cost / 1e6:9.1f}M {count:>9} {cost / count:>9.0f}  {short(name)}')
    else:
        by_caller = collections.Counter()
        for (caller, callee), cost in edges.items():
            caller_name = names.get(caller, '')
            if args.library in names.get(callee, '') and args.library not in caller_name:
                by_caller[caller_name] += cost
        total = sum(by_caller.values())
        print(f'{total / 1e6:.1f} M instructions in calls into {args.library!r}, by caller:')
        for name, cost in by_caller.most_common(args.top):
            print(f'{cost / 1e6:9.2f}M  {short(name)}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
