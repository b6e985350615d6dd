"""The data of the model-design commands: ``inspect`` (``inspecting``), the throughput-interactivity frontier
(``pareto``), ``report`` (``reporting``) and ``diff`` (``diffing``)."""
