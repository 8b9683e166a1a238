import type { Metadata } from "next";
import Link from "next/link";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";
import { buttonVariants } from "../../../components/ui/button";

export const metadata: Metadata = { title: "Settings" };

export default function SettingsPage() {
  return (
    <NotBuiltYet
      href="/settings"
      action={
        <Link href="/settings/connections" className={buttonVariants({ variant: "outline", size: "sm" })}>
          Connections
        </Link>
      }
    />
  );
}
