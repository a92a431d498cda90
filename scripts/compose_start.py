#!/usr/bin/env python3
"""Print how an SDK's docker-compose.yml starts Centrifugo, for bash's eval.

scripts/test.sh's "sdk suites" step starts herald, under the name
centrifugo, exactly as each SDK's CI starts the Centrifugo container: with
the service's command line and its environment. It reads them from the
docker-compose.yml that ships with the SDK's tests (the Go module and the
PyPI sdist), so the step follows the SDK when its CI changes.

Only the part of the Compose format those files use is read: the first
service's `command` (a string or a list), `environment` (a list of
KEY=VALUE or a mapping), `volumes` (a list of HOST:CONTAINER[:MODE] file
mounts) and `extra_hosts` (a list of NAME:ADDRESS). The output is three
bash array assignments:

    args=('--config=/abs/dir/centrifugo_test.json')
    envs=('CENTRIFUGO_X=1' ...)
    hosts=('host.docker.internal')

args leaves out the program name (the first word of the command); an
argument naming a mounted file's container path names the host file
instead (relative host paths are taken from the compose file's directory),
since herald runs on the host. hosts are the extra_hosts names the
container would resolve, which the host must resolve too.
"""

import os
import shlex
import sys


def unquote(v):
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def strip_comment(line):
    # A '#' starts a comment at the start of a line or after a space, and
    # not inside quotes; enough for these files.
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def parse(text):
    """Returns the first service's command, environment, volumes (as
    (host, container) pairs) and extra_hosts names."""
    command, env, volumes, hosts = [], [], [], []
    section, section_indent = None, 0
    for raw in text.splitlines():
        line = strip_comment(raw).rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        if section and indent <= section_indent:
            section = None
        if section is None:
            key, _, value = body.partition(":")
            if key in ("command", "environment", "volumes", "extra_hosts"):
                section, section_indent = key, indent
                value = value.strip()
                if key == "command" and value:
                    command = shlex.split(value)
                    section = None
            continue
        item = body[2:] if body.startswith("- ") else None
        if section == "command":
            if item is not None:
                command.append(unquote(item))
        elif section == "volumes":
            if item is not None:
                parts = unquote(item).split(":")
                if len(parts) >= 2:
                    volumes.append((parts[0], parts[1]))
        elif section == "extra_hosts":
            if item is not None:
                hosts.append(unquote(item).split(":")[0])
        elif item is not None:
            env.append(unquote(item))
        else:
            key, _, value = body.partition(":")
            env.append(f"{key.strip()}={unquote(value)}")
    return command, env, volumes, hosts


def host_paths(args, volumes, base):
    """Rewrites the container paths of mounted files in args to host paths."""
    out = []
    for a in args:
        for host, container in volumes:
            if container in a:
                a = a.replace(container, os.path.normpath(os.path.join(base, host)))
        out.append(a)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: compose_start.py docker-compose.yml")
    with open(sys.argv[1], encoding="utf-8") as f:
        command, env, volumes, hosts = parse(f.read())
    if not command or command[0] != "centrifugo":
        sys.exit(f"{sys.argv[1]}: no 'centrifugo' command found")
    args = host_paths(command[1:], volumes, os.path.dirname(os.path.abspath(sys.argv[1])))
    print("args=(" + " ".join(shlex.quote(a) for a in args) + ")")
    print("envs=(" + " ".join(shlex.quote(e) for e in env) + ")")
    print("hosts=(" + " ".join(shlex.quote(h) for h in hosts) + ")")


if __name__ == "__main__":
    main()
