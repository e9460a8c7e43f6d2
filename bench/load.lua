-- wrk script for bench/load.sh: POST one preset run to /v1/memory.
-- The body matches the integration tests' preset + override request.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"llama3-70b","gpu":"h100-sxm","dp":8,"seq":2048}'

-- Count non-200 answers so a fast stream of errors cannot pass as load.
local bad = 0
response = function(status, headers, body)
  if status ~= 200 then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("non-200 responses: %d\n", bad))
end
