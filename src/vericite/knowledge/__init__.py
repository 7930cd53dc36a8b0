"""Where knowledge lives: the embedded graph store, a remote SPARQL endpoint, and the loaders that fill them.

Import from the submodules (``vericite.knowledge.store`` ...): importing this package imports nothing heavy.
"""
