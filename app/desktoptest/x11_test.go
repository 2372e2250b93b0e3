//go:build linux

package desktoptest

import (
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// x11 is a connection to the test's X server, to find the app's window,
// ask it to close the way a window manager does (WM_DELETE_WINDOW), and
// read whether it is shown.
type x11 struct {
	c    *xgb.Conn
	root xproto.Window
}

func dialX11(display string) (*x11, error) {
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("connect to X display %s: %w", display, err)
	}
	return &x11{c: c, root: xproto.Setup(c).DefaultScreen(c).Root}, nil
}

func (x *x11) close() { x.c.Close() }

func (x *x11) atom(name string) (xproto.Atom, error) {
	r, err := xproto.InternAtom(x.c, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, fmt.Errorf("intern atom %s: %w", name, err)
	}
	return r.Atom, nil
}

// window finds the top-level window whose WM_NAME is name.
func (x *x11) window(name string) (xproto.Window, error) {
	tree, err := xproto.QueryTree(x.c, x.root).Reply()
	if err != nil {
		return 0, fmt.Errorf("query tree: %w", err)
	}
	for _, w := range tree.Children {
		p, err := xproto.GetProperty(x.c, false, w, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 256).Reply()
		if err == nil && string(p.Value) == name {
			return w, nil
		}
	}
	return 0, fmt.Errorf("no top-level window named %q", name)
}

// viewable says whether w is mapped and shown.
func (x *x11) viewable(w xproto.Window) (bool, error) {
	a, err := xproto.GetWindowAttributes(x.c, w).Reply()
	if err != nil {
		return false, fmt.Errorf("window attributes: %w", err)
	}
	return a.MapState == xproto.MapStateViewable, nil
}

// requestClose sends w the WM_DELETE_WINDOW message a window manager sends
// when the user clicks the close button.
func (x *x11) requestClose(w xproto.Window) error {
	protocols, err := x.atom("WM_PROTOCOLS")
	if err != nil {
		return err
	}
	del, err := x.atom("WM_DELETE_WINDOW")
	if err != nil {
		return err
	}
	ev := xproto.ClientMessageEvent{Format: 32, Window: w, Type: protocols,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{uint32(del), 0, 0, 0, 0})}
	return xproto.SendEventChecked(x.c, false, w, xproto.EventMaskNoEvent, string(ev.Bytes())).Check()
}
