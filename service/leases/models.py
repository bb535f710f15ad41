from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base, UTCDateTime


class Lease(Base):
    """A named lease held by one worker until it expires; a worker killed with SIGKILL loses
    its leases to the others once ``expires_at`` passes."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(300), primary_key=True)
    owner: Mapped[str] = mapped_column(String(200))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
