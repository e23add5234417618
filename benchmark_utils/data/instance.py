"""What a dataset instance is: its name and parameters, handed by every
dataset's ``get_data`` with its problem, so that the run layer
(objective.py) can find what belongs to the instance (the plain run's
tuned table) without problems carrying it."""
import dataclasses


@dataclasses.dataclass(frozen=True)
class DatasetInstance:
    """A dataset's ``name``, its ``parameters`` (sorted (name, value)
    pairs) and whether every parameter is at its default (the first value
    of the class's list): the instance a plain run uses."""

    name: str
    parameters: tuple
    is_default: bool


def instance_of(dataset):
    """The :class:`DatasetInstance` of a benchopt dataset."""
    declared = type(dataset).parameters
    return DatasetInstance(
        name=dataset.name,
        parameters=tuple(sorted(
            (name, getattr(dataset, name)) for name in declared)),
        is_default=all(getattr(dataset, name) == values[0]
                       for name, values in declared.items()))
