// A token service for tests/images_failures.rs, as a registry using the Docker token
// authentication flow expects one (Docker Hub and GHCR work this way): the registry answers 401
// with `WWW-Authenticate: Bearer realm=…,service=…,scope=…`; the client asks this service at the
// realm for a token, with HTTP Basic credentials or none; the service answers with a JWT signed
// by a key whose certificate the registry trusts (its `auth.token.rootcertbundle`), and the
// client sends the token to the registry as `Authorization: Bearer …`.
//
// Policy, like a hosted registry's: anonymous clients may pull repositories under `public/`;
// the one user (from the command line) may pull and push anything; wrong credentials are a 401.
// Every request is logged on stderr as `token request: user=… scope=… granted=…`.
//
// Usage: token-server <cert.pem to write> <issuer> <user> <password>
// Prints `listening on 127.0.0.1:PORT` on stderr once it serves.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

type access struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

func main() {
	if len(os.Args) != 5 {
		log.Fatal("usage: token-server <cert.pem> <issuer> <user> <password>")
	}
	certPath, issuer, user, password := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: issuer},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		log.Fatal(err)
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(certPath, pemBytes, 0o644); err != nil {
		log.Fatal(err)
	}

	http.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		who := ""
		if u, p, ok := r.BasicAuth(); ok {
			if u != user || p != password {
				log.Printf("token request: user=%s scope=%q refused", u, r.URL.Query()["scope"])
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintln(w, `{"details":"incorrect username or password"}`)
				return
			}
			who = u
		}
		var granted []access
		for _, scope := range r.URL.Query()["scope"] {
			// repository:NAME:ACTION[,ACTION]; NAME may hold ':' only with a port, never here.
			parts := strings.Split(scope, ":")
			if len(parts) != 3 || parts[0] != "repository" {
				continue
			}
			var actions []string
			for _, a := range strings.Split(parts[2], ",") {
				if who != "" || (a == "pull" && strings.HasPrefix(parts[1], "public/")) {
					actions = append(actions, a)
				}
			}
			granted = append(granted, access{Type: "repository", Name: parts[1], Actions: actions})
		}
		log.Printf("token request: user=%s scope=%q granted=%v", who, r.URL.Query()["scope"], granted)
		now := time.Now()
		claims := map[string]any{
			"iss":    issuer,
			"sub":    who,
			"aud":    r.URL.Query().Get("service"),
			"exp":    now.Add(5 * time.Minute).Unix(),
			"nbf":    now.Add(-time.Minute).Unix(),
			"iat":    now.Unix(),
			"jti":    fmt.Sprint(now.UnixNano()),
			"access": granted,
		}
		token, err := sign(key, der, claims)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"token":        token,
			"access_token": token,
			"expires_in":   300,
			"issued_at":    now.UTC().Format(time.RFC3339),
		})
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s", ln.Addr())
	log.Fatal(http.Serve(ln, nil))
}

// sign makes an ES256 JWT whose header carries the certificate (x5c), which the registry checks
// against its root bundle.
func sign(key *ecdsa.PrivateKey, cert []byte, claims map[string]any) (string, error) {
	header, err := json.Marshal(map[string]any{
		"alg": "ES256",
		"typ": "JWT",
		"x5c": []string{base64.StdEncoding.EncodeToString(cert)},
	})
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(body)
	digest := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signed + "." + enc.EncodeToString(sig), nil
}
