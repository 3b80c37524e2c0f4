"""Read temperature and humidity from a serial sensor."""


class SerialSensor:
    """A sensor on a serial port that prints `T=21.4 H=40` lines."""

    def __init__(self, port, offset=0.0):
        self.port = port
        self.offset = offset

    def read_reading(self):
        """Return (temperature, humidity), corrected by the calibration offset."""
        line = self._readline()
        temp, hum = parse_line(line)
        return temp + self.offset, hum

    def _readline(self):
        with open(self.port) as fh:
            return fh.readline()


def parse_line(line):
    """Parse `T=21.4 H=40` into floats."""
    parts = dict(p.split("=") for p in line.split())
    return float(parts["T"]), float(parts["H"])
