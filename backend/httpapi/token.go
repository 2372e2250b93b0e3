package httpapi

import (
	"context"
	"net/http"
)

// Tokens is the part of Services that rotates the install token.
type Tokens interface {
	// RotateToken makes and saves a new install token, and from then on
	// refuses the old one and the session cookies issued for it; it
	// returns the new token.
	RotateToken(ctx context.Context) (string, error)
}

// TokenResponse is what POST /api/token/rotate answers.
type TokenResponse struct {
	// Token is the new install token.
	Token string `json:"token"`
}

// tokenRoutes registers POST /api/token/rotate. A browser that sent its
// session cookie gets a new one, so the window that rotated stays signed
// in; every other holder of the old token or an old cookie is refused.
func (h *Handler) tokenRoutes() {
	h.mux.HandleFunc("POST /api/token/rotate", func(w http.ResponseWriter, r *http.Request) {
		tok, err := h.s.Tokens.RotateToken(r.Context())
		if err != nil {
			writeErr(w, err)
			return
		}
		if _, err := r.Cookie(sessionCookieName(r)); err == nil {
			h.setSessionCookie(w, r)
		}
		writeJSON(w, http.StatusOK, TokenResponse{Token: tok})
	})
}

// RotateToken runs POST /api/token/rotate and returns the new token. The
// client keeps sending the old one: make a new Client with the result.
func (c *Client) RotateToken(ctx context.Context) (string, error) {
	var out TokenResponse
	err := c.do(ctx, http.MethodPost, "/api/token/rotate", nil, &out)
	return out.Token, err
}
