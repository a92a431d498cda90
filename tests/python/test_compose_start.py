"""scripts/compose_start.py, which the sdk suites steps of scripts/test.sh
use to start herald as an SDK's docker-compose.yml starts Centrifugo: the
command line, the environment, mounted files as host paths and the
extra_hosts names the host must resolve."""

import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# As centrifuge-js 5.7.1's docker-compose.yml: a config file mounted into
# the container and named on the command line, and host.docker.internal.
COMPOSE = """services:
  centrifugo:
    image: centrifugo/centrifugo:v6.8.0
    command:
      - centrifugo
      - --config=/centrifugo/config.json
    ports:
      - "8000:8000"
    volumes:
      - ./centrifugo_test.json:/centrifugo/config.json:ro
    environment:
      - CENTRIFUGO_LOG_LEVEL=trace  # a comment
    extra_hosts:
      - "host.docker.internal:host-gateway"
"""


def _arrays(tmp_path, text):
    path = tmp_path / "docker-compose.yml"
    path.write_text(text)
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "compose_start.py"), str(path)],
        check=True, capture_output=True, text=True,
    ).stdout
    arrays = {}
    for line in out.splitlines():
        name, _, value = line.partition("=(")
        arrays[name] = shlex.split(value[:-1])
    return arrays


def test_mounted_file_and_extra_hosts(tmp_path):
    got = _arrays(tmp_path, COMPOSE)
    assert got["args"] == [f"--config={tmp_path}/centrifugo_test.json"]
    assert got["envs"] == ["CENTRIFUGO_LOG_LEVEL=trace"]
    assert got["hosts"] == ["host.docker.internal"]


def test_environment_only(tmp_path):
    got = _arrays(tmp_path, COMPOSE.split("    ports:")[0].replace("- --config=/centrifugo/config.json", "- --client.insecure"))
    assert got == {"args": ["--client.insecure"], "envs": [], "hosts": []}
