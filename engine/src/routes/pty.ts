import type { FastifyInstance } from "fastify";
import type { EngineContext } from "../context.js";

export function ptyRoutes(_app: FastifyInstance, _ctx: EngineContext): void {}
