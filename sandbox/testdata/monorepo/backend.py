# A build backend with no dependencies: an editable wheel is a .pth
# file that puts this directory on sys.path.
import base64, hashlib, os, zipfile

NAME, VERSION = "hello", "1.0"
DIST = NAME + "-" + VERSION


def _wheel(directory, files):
    files = dict(files)
    files[DIST + ".dist-info/METADATA"] = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (NAME, VERSION)
    files[DIST + ".dist-info/WHEEL"] = "Wheel-Version: 1.0\nGenerator: backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(text.encode())))
    record.append(DIST + ".dist-info/RECORD,,")
    files[DIST + ".dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = DIST + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hello.py")) as f:
        return _wheel(wheel_directory, {"hello.py": f.read()})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.abspath(__file__))
    return _wheel(wheel_directory, {"__editable__.hello.pth": here + "\n"})
