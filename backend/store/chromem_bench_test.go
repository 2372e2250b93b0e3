package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/philippgille/chromem-go"
	bolt "go.etcd.io/bbolt"
)

// BenchmarkVectorChromem runs the same queries as BenchmarkVectorSearch
// through an in-memory chromem-go collection loaded with the same vectors:
// the measurement behind vectorIndex replacing chromem-go's query path.
func BenchmarkVectorChromem(b *testing.B) {
	_, vecs := benchQueries(200)
	for _, n := range benchSizes {
		for _, scoped := range []bool{false, true} {
			name := sizeName(n)
			var where map[string]string
			if scoped {
				name += "/project"
				where = map[string]string{"p": benchProjects[0]}
			}
			b.Run(name, func(b *testing.B) {
				s := benchStore(b, n)
				coll := chromemFromStore(b, s)
				ctx := context.Background()
				lat := make(latencies, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t := time.Now()
					if _, err := coll.QueryEmbedding(ctx, vecs[i%len(vecs)], 20, where, nil); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t))
				}
				lat.report(b)
			})
		}
	}
}

func chromemFromStore(b *testing.B, s *Store) *chromem.Collection {
	b.Helper()
	coll, err := chromem.NewDB().CreateCollection("memories", nil, func(context.Context, string) ([]float32, error) {
		return nil, errors.New("no embedding here")
	})
	if err != nil {
		b.Fatal(err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRecs).ForEach(func(k, v []byte) error {
			_, m, err := decodeRecord(v)
			if err != nil {
				return err
			}
			return coll.AddDocument(context.Background(), chromem.Document{ID: m.ID,
				Metadata: map[string]string{"p": m.Project, "k": string(m.Kind)}, Embedding: normalized(m.Embedding)})
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	return coll
}
