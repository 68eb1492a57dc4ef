"""Several tool sources as one toolbox (`CombinedToolbox`): the built-in tools, the MCP
servers' tools and tool search, each call routed to the source that offers its tool.

The wrappers go around the combination in one place, `runtime.open.build_toolbox`:
`Audit( Redact( Approve( Builtin + MCP + search ) ) )`, the approving wrapper directly around
it and the outer two added by `paicli.audit.guard` (which the LangChain bridge puts around its
own approving wrapper too), audit outermost so denied and refused calls are recorded too.
"""

from __future__ import annotations

from collections.abc import Mapping

from paicli.tools.base import Toolbox, ToolOutcome, ToolSpec


class CombinedToolbox:
    """Several toolboxes as one; a name offered by two sources goes to the first."""

    def __init__(self, *toolboxes: Toolbox) -> None:
        self._toolboxes = toolboxes
        self._owner: dict[str, Toolbox] = {}
        # Every name offered this session and by whom: a call to a name that is gone goes to
        # the toolbox that offered it, which can say why (a crashed server, say).
        self._offered_by: dict[str, Toolbox] = {}

    def specs(self) -> list[ToolSpec]:
        owner: dict[str, Toolbox] = {}
        specs: list[ToolSpec] = []
        for toolbox in self._toolboxes:
            for spec in toolbox.specs():
                if spec.name not in owner:
                    owner[spec.name] = toolbox
                    specs.append(spec)
        self._owner = owner
        self._offered_by.update(owner)
        return specs

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        owner = self._owner.get(spec.name)
        if owner is None:
            earlier = self._offered_by.get(spec.name)
            refused = None if earlier is None else earlier.precheck(spec, arguments)
            return refused or ToolOutcome.refused(f"Error: there is no tool named {spec.name!r}.")
        return owner.precheck(spec, arguments)

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        owner = self._owner.get(spec.name)
        return None if owner is None else owner.must_ask(spec, arguments)

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        owner = self._owner.get(spec.name)
        if owner is None:
            refused = self.precheck(spec, arguments)
            assert refused is not None
            return refused
        return await owner.call(spec, arguments)
