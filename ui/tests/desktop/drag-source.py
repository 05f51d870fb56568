#!/usr/bin/python3
"""A drag source for the desktop window test, standing in for a file manager.

Usage: drag-source.py X Y FILE...

Opens a small undecorated GTK window at (X, Y) that offers FILE... as a
text/uri-list when dragged, the way file managers offer files, and prints
"ready" once it is on screen and "drag-end" when a drag finishes. The test
then drags from it onto the KIP Explorer window with xdotool, so the files
arrive through the X drag-and-drop protocol like any user's drop.
"""
import os
import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

x, y = int(sys.argv[1]), int(sys.argv[2])
uris = [GLib.filename_to_uri(os.path.abspath(f), None) for f in sys.argv[3:]]

window = Gtk.Window(title="kip-drag-source")
window.set_decorated(False)
window.set_default_size(160, 120)
window.move(x, y)
box = Gtk.EventBox()
box.add(Gtk.Label(label="%d file(s)" % len(uris)))
window.add(box)

box.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
box.drag_source_add_uri_targets()
box.connect("drag-data-get", lambda _w, _ctx, data, _info, _time: data.set_uris(uris))
box.connect("drag-end", lambda *_: print("drag-end", flush=True))
window.connect("map-event", lambda *_: print("ready", flush=True))
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()
