"""The typed key a derived view is memoised under on a model state (`ModelState.view`). Kept apart from
`engine.state.model_state` so that a module owning a view (search's projection and ranking) declares its key without
importing the model's machinery: a warm search loads neither."""

from __future__ import annotations

from typing import Generic, TypeVar

V = TypeVar("V")


class ViewKey(Generic[V]):
    """The name a derived view is memoised under on a state, typed by the view's value."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ViewKey({self.name!r})"


__all__ = ["ViewKey"]
