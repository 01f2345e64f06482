"""Format 1.1's network keys as pydantic models: ``cluster.network``, ``cluster.dns``, ``pods[].program``
and per-phase ``jitter`` (``../shared/scenario-format-1.1.md``; documented in ``docs/scenario-format.md``).

Kept apart from :mod:`fakecluster.scenario.format` so the version-1 contract reads on its own; that
module embeds these. Like every scenario model they forbid unknown keys and use the doc's camelCase.
"""

import re
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, Strict, model_validator
from pydantic.alias_generators import to_camel

from fakecluster.scenario.durations import parse_duration
from fakecluster.scenario.factories import empty_list

__all__ = ["JITTER_PHASES", "ConnectTarget", "DnsSpec", "NetworkSpec", "ProgramModel", "RetryModel",
           "WaitForModel", "parse_jitter", "template_fields"]

JITTER_PHASES = ("schedule", "pull", "start", "ready", "exit", "terminate", "startup", "work")
TEMPLATE_FIELDS = ("jobset", "namespace", "subdomain", "replicatedJob", "jobIndex", "podIndex", "attempt")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")

_Duration = Annotated[float, PlainValidator(parse_duration)]
_ExitCode = Annotated[int, Strict(), Field(ge=0, le=255)]
"""An exit code, as version 1's ``exit.code``: what ``waitpid`` can report, 0..255."""
_PositiveInt = Annotated[int, Strict(), Field(ge=1, le=2**31 - 1)]
"""Attempts and peers: int32, like version 1's counts."""
_Bool = Annotated[bool, Strict()]
_Port = Annotated[int, Strict(), Field(ge=1, le=65535)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


def template_fields(host: str) -> list[str]:
    """The ``{...}`` placeholders of ``host``; ``ValueError`` for one the format does not define."""
    names = _PLACEHOLDER.findall(host)
    for name in names:
        if name not in TEMPLATE_FIELDS:
            raise ValueError(f"unknown placeholder {{{name}}} in {host!r}; the placeholders are "
                             + ", ".join(f"{{{f}}}" for f in TEMPLATE_FIELDS))
    return names


def parse_jitter(value: object) -> float | dict[str, float]:
    """``jitter: 2s`` (every delay of the rule, version 1) or ``jitter: {pull: 9s, start: 1s}``."""
    if isinstance(value, dict):
        out: dict[str, float] = {}
        for key, amount in value.items():
            if key not in JITTER_PHASES:
                raise ValueError(f"unknown delay {key!r} in jitter; the delays are "
                                 f"{', '.join(JITTER_PHASES)}")
            out[key] = parse_duration(amount)
        return out
    return parse_duration(value)


Jitter = Annotated[float | dict[str, float], PlainValidator(parse_jitter)]


class NetworkSpec(_Model):
    """``cluster.network``."""

    reachable_after: _Duration = 0.0
    syn_retries: Annotated[int, Strict(), Field(ge=0, le=20)] = 6
    syn_loss: Literal["perPacket", "perConnection"] = "perPacket"
    """An addition (``docs/scenario-format.md``): ``perConnection`` paths keep a lost first SYN's fate."""


class DnsSpec(_Model):
    """``cluster.dns``: a profile, optional overrides and the EndpointSlice → DNS propagation delay."""

    profile: Literal["kubeadm", "kubeadm-1.31", "nodelocal"] = "kubeadm"
    cache: Literal["none", "cluster", "node"] | None = None
    positive_ttl: _Duration | None = Field(default=None, alias="positiveTTL")
    negative_ttl: _Duration | None = Field(default=None, alias="negativeTTL")
    propagation: _Duration = 0.0


class RetryModel(_Model):
    interval: _Duration = 1.0
    backoff: Annotated[float, Field(ge=1, allow_inf_nan=False)] = 1.0
    max_interval: _Duration | None = None
    timeout: _Duration | None = None
    attempts: _PositiveInt | None = None
    give_up_after: _Duration | None = None
    exit_code: _ExitCode = 1

    @model_validator(mode="after")
    def _positive(self) -> Self:
        if self.interval <= 0:
            raise ValueError("retry.interval must be greater than 0s")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError("retry.timeout must be greater than 0s")
        return self


class WaitForModel(_Model, defer_build=True):
    """``waitFor``: ``connected``, ``targetsWorking``, ``{peers: N}``, a list of them (all must hold),
    with an optional ``timeout`` and ``exitCode``."""

    connected: _Bool = False
    peers: _PositiveInt | None = None
    targets_working: _Bool = False
    timeout: _Duration | None = None
    exit_code: _ExitCode = 1

    @model_validator(mode="before")
    @classmethod
    def _forms(cls, value: Any) -> Any:
        items = value if isinstance(value, list) else [value]
        merged: dict[str, Any] = {}
        for item in items:
            if item == "connected":
                merged["connected"] = True
            elif item == "targetsWorking":
                merged["targetsWorking"] = True
            elif isinstance(item, dict):
                merged.update(item)
            else:
                raise ValueError(f"expected connected, targetsWorking or {{peers: N}}, got {item!r}")
        return merged


class ConnectTarget(_Model, defer_build=True):
    """``"host:port"`` or ``{replicatedJob: <name>, port: <n>, excludeSelf: bool}``."""

    host: str | None = None
    replicated_job: str | None = None
    port: _Port
    exclude_self: _Bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            host, sep, port = value.rpartition(":")
            if not sep or not host or not (port.isascii() and port.isdigit()) or len(port) > 5:
                raise ValueError(f"expected 'host:port', got {value!r}")
            return {"host": host, "port": int(port)}
        if isinstance(value, dict) and "host" in value:
            raise ValueError("write a host target as the string 'host:port'")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        if (self.host is None) == (self.replicated_job is None):
            raise ValueError("a target is 'host:port' or {replicatedJob: <name>, port: <n>}")
        if self.host is not None:
            template_fields(self.host)
            if self.exclude_self:
                raise ValueError("excludeSelf goes with replicatedJob targets")
        return self


def _work(value: object) -> float | str:
    if value in ("forever", "untilDisconnected"):
        return str(value)
    return parse_duration(value)


class ProgramModel(_Model, defer_build=True):
    """``pods[].program``: what the pod's container does on the network."""

    container: str | None = None
    listen: list[_Port] = Field(default_factory=empty_list)
    startup: _Duration = 0.0
    connect: list[ConnectTarget] = Field(default_factory=empty_list)
    retry: RetryModel = Field(default_factory=RetryModel)
    wait_for: WaitForModel | None = None
    work: Annotated[float | str, PlainValidator(_work)] = "forever"
    exit_code: _ExitCode = 0
    disconnect_exit_code: _ExitCode = 1
    ready: Literal["listening", "connected", "working"] | None = None

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        if self.ready == "listening" and not self.listen:
            raise ValueError("ready: listening needs ports to listen on (listen: [...])")
        if self.ready == "connected" and not self.connect:
            raise ValueError("ready: connected needs connect targets")
        if self.wait_for is not None and (self.wait_for.connected or self.wait_for.targets_working) \
                and not self.connect:
            raise ValueError("waitFor connected/targetsWorking needs connect targets")
        if self.wait_for is not None and self.wait_for.peers is not None and not self.listen:
            raise ValueError("waitFor peers needs ports to listen on (listen: [...])")
        return self
