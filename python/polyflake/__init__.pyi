"""Type stubs for polyflake (the public names of polyflake._polyflake)."""

from polyflake._polyflake import *
from polyflake._polyflake import __all__ as __all__
from polyflake._polyflake import __version__ as __version__
