// Package heldconn gives an HTTP server connections that can hold small
// writes and send them with the next large one, so that an answer whose
// header and body net/http writes apart goes out in one write (Conn).
// A server takes it with Listener and ConnContext; a handler holds its
// connection's writes with Hold while it writes an answer whole.
package heldconn
