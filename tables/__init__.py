"""Table files, installed as sowsolve.tables (from the folder tables/): format, writer, reader
(probe), and what the commands ask of them."""
from .store import Table, TableWriter, open_table

__all__ = ["Table", "TableWriter", "open_table"]
