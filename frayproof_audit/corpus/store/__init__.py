"""Where a run's rows go: the Arrow schemas of the four tables, the dataset's layout, and the
staging and commit of a run, locally or on an object store (with the run id's lock there).

Nothing is imported on the package's import: each worker pays only for the modules it uses.
"""
