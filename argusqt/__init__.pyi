from argusqt.api import FREQ as FREQ
from argusqt.api import NK as NK
from argusqt.api import ZERO as ZERO
from argusqt.api import P as P
from argusqt.api import ProtectedTable as ProtectedTable
from argusqt.api import Protection as Protection
from argusqt.api import open_session as open_session
from argusqt.api import protect as protect

__version__: str
__all__: list[str]
