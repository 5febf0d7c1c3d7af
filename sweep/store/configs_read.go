package store

import "fmt"

// ConfigYAMLs returns the effective config YAML of every stored point,
// by config hash (what `plot` reads to say which config and overrides
// stand behind a figure).
func (s *Store) ConfigYAMLs() (map[string][]byte, error) {
	rows, err := s.db.Query(`SELECT config_hash, config_yaml FROM configs`)
	if err != nil {
		return nil, fmt.Errorf("store %s: table configs: %w", s.path, err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var hash, body string
		if err := rows.Scan(&hash, &body); err != nil {
			return nil, fmt.Errorf("store %s: table configs: %w", s.path, err)
		}
		out[hash] = []byte(body)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store %s: table configs: %w", s.path, err)
	}
	return out, nil
}
